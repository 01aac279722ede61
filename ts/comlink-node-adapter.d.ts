/** comlink's Node adapter ships its types beside the .mjs without a package "exports" map. */
declare module 'comlink/dist/esm/node-adapter.mjs' {
  import type { Endpoint } from 'comlink';
  import type { NodeEndpoint } from 'comlink/dist/esm/node-adapter';
  export default function nodeEndpoint(nep: NodeEndpoint): Endpoint;
}
