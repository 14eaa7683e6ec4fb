// Node 20 lacks `Promise.withResolvers` (Node 22 has it), which the Restate SDK calls from 1.14 on: without it a
// durable run hangs and fails with a TypeError (notes/restate.md). Imported before the SDK, by the worker alone.
// SDK 1.17 with this polyfill rather than 1.12 without it: the newer SDK is the one measured against server 1.7.
type WithResolvers = <T>() => { promise: Promise<T>; resolve: (value: T) => void; reject: (reason: unknown) => void };

const promiseConstructor = Promise as unknown as { withResolvers?: WithResolvers };
if (typeof promiseConstructor.withResolvers !== 'function') {
  promiseConstructor.withResolvers = <T>() => {
    let resolve!: (value: T) => void;
    let reject!: (reason: unknown) => void;
    const promise = new Promise<T>((settle, fail) => {
      resolve = settle;
      reject = fail;
    });
    return { promise, resolve, reject };
  };
}
