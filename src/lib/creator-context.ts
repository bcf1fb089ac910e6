import { AsyncResource } from 'node:async_hooks';

/**
 * A runner that calls functions in the async context it was created in, not in that of whoever
 * triggers the call: batched work (group commits, buffered flushes) must not run inside the
 * transaction of the request that happened to start it, lending it to everyone's items.
 */
export const inCreatorContext = () => AsyncResource.bind(<R>(fn: () => R) => fn());
