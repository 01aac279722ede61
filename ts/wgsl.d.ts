/** WGSL sources in shaders/ are imported as strings (esbuild `text` loader, vitest plugin). */
declare module '*.wgsl' {
  const source: string;
  export default source;
}
