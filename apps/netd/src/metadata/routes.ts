/**
 * The metadata API's answers (inventory §7.5): one request (method, URL, the caller's source
 * address) in, one response out. The HTTP server only carries these; the caller's identity comes
 * from {@link MetadataAnswerDeps.identify} (Zookeeper: `lookupCaller`), user-data from the
 * provisioner database.
 *
 * | Route | Answer |
 * |---|---|
 * | `/` | 209, `{"message": "PVC Provisioner Metadata API version 1"}` (to anyone, as the original) |
 * | `/<ver>/meta-data/` | 200, `instance-id\nname\nprofile` |
 * | `/<ver>/meta-data/instance-id`, `name`, `profile` | 200, the VM's UUID, name, profile (`""` when none) |
 * | `/<ver>/user-data` | 200, the user-data of the VM's profile (`""` when none, as the original) |
 *
 * Differences from the original, each on purpose: every `/<ver>/…` route answers 404 to a caller
 * that is not exactly one VM (the original answered 200 with nothing, or failed); 503 when
 * Zookeeper or the database cannot answer; 405 for a method other than GET/HEAD on a route.
 *
 * @module
 */
import type { CallerLookup, VmIdentity } from '@pvc/zk';
import { describeError, type Logger } from '@pvc/runtime';
import { UserDataError } from './user-data.js';

/** The routes. */
export type MetadataRoute =
  | { readonly kind: 'banner' }
  | { readonly kind: 'meta-index' }
  | { readonly kind: 'meta-key'; readonly key: 'instance-id' | 'name' | 'profile' }
  | { readonly kind: 'user-data' }
  | { readonly kind: 'none' };

/** One request. `caller` is the source address of the connection. */
export interface MetadataRequest {
  readonly method: string;
  readonly url: string;
  readonly caller: string;
}

/** One response. */
export interface MetadataResponse {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** What the answers need. */
export interface MetadataAnswerDeps {
  /** The VM behind a source address; throws when Zookeeper cannot answer. */
  identify(caller: string): Promise<CallerLookup>;
  /** The user-data of a profile (null = none); throws {@link UserDataError} when the database cannot answer. */
  userData(profile: string): Promise<string | null>;
  readonly logger: Logger;
}

export const BANNER = JSON.stringify({ message: 'PVC Provisioner Metadata API version 1' });
export const META_INDEX = 'instance-id\nname\nprofile';
const TEXT = 'text/plain; charset=utf-8';
const SEGMENT = '[^/]+';
const META_KEY = new RegExp(`^/${SEGMENT}/meta-data/(instance-id|name|profile)$`);

/** The route of a URL path (the query string is ignored). */
export function routeOf(url: string): MetadataRoute {
  const path = url.split('?')[0] ?? '';
  if (path === '/') return { kind: 'banner' };
  if (new RegExp(`^/${SEGMENT}/meta-data/?$`).test(path)) return { kind: 'meta-index' };
  const key = META_KEY.exec(path)?.[1];
  if (key === 'instance-id' || key === 'name' || key === 'profile') return { kind: 'meta-key', key };
  if (new RegExp(`^/${SEGMENT}/user-data$`).test(path)) return { kind: 'user-data' };
  return { kind: 'none' };
}

const text = (status: number, body: string): MetadataResponse => ({ status, contentType: TEXT, body });

/** Answers one request. Never throws: every failure is a status with a short text. */
export async function answerMetadata(req: MetadataRequest, d: MetadataAnswerDeps): Promise<MetadataResponse> {
  const route = routeOf(req.url);
  if (route.kind === 'none') return text(404, 'not found\n');
  if (req.method !== 'GET' && req.method !== 'HEAD') return { ...text(405, 'method not allowed\n'), headers: { allow: 'GET, HEAD' } };
  if (route.kind === 'banner') return { status: 209, contentType: 'application/json', body: BANNER };
  let found: CallerLookup;
  try {
    found = await d.identify(req.caller);
  } catch (err) {
    d.logger.warn({ caller: req.caller, url: req.url, err: describeError(err) }, 'metadata request: Zookeeper could not answer who the caller is; 503');
    return text(503, 'metadata unavailable, try again\n');
  }
  if (found.kind !== 'found') {
    const why = found.kind === 'ambiguous' ? found.why : found.kind === 'no-vm' ? `its MAC ${found.mac} is on no VM` : 'no lease or reservation on a managed network holds the address';
    (found.kind === 'ambiguous' ? d.logger.warn : d.logger.info).call(d.logger, { caller: req.caller, url: req.url, outcome: found.kind }, `metadata request refused (404): ${why}`);
    return text(404, 'not found\n');
  }
  return answerFor(route, found.vm, req, d);
}

async function answerFor(route: Exclude<MetadataRoute, { kind: 'none' | 'banner' }>, vm: VmIdentity, req: MetadataRequest, d: MetadataAnswerDeps): Promise<MetadataResponse> {
  const log = d.logger.child({ caller: req.caller, vm: vm.name, uuid: vm.uuid });
  switch (route.kind) {
    case 'meta-index':
      return text(200, META_INDEX);
    case 'meta-key':
      log.debug({ key: route.key }, 'metadata served');
      return text(200, route.key === 'instance-id' ? vm.uuid : route.key === 'name' ? vm.name : (vm.profile ?? ''));
    case 'user-data': {
      if (vm.profile === null) return text(200, '');
      try {
        const data = await d.userData(vm.profile);
        log.info({ profile: vm.profile, found: data !== null }, 'returning user-data for the profile');
        return text(200, data ?? '');
      } catch (err) {
        // The guard logged the database failure once; this line is per request, at debug.
        log.debug({ profile: vm.profile, err: describeError(err) }, 'user-data unavailable; 503');
        return text(503, err instanceof UserDataError ? 'user-data database unavailable, try again\n' : 'user-data unavailable, try again\n');
      }
    }
  }
}
