// placeholder until the service entry lands
export {};
