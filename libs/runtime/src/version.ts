/** The version every service and the `pvc` command report. */
export const PVC_VERSION = '0.1.0';
