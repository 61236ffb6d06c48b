/**
 * The reference web terminal's files the worker serves at /terminal, imported as text: by esbuild through
 * launcher/workerAssets.ts (`npm start`, the tests) and by wrangler through the second `Text` rule in wrangler.toml.
 */
declare module '*.html' {
  const text: string;
  export default text;
}
declare module '*.css' {
  const text: string;
  export default text;
}
declare module '@microsoft/signalr/dist/browser/signalr.min.js' {
  const text: string;
  export default text;
}
declare module '*/web-terminal/app.js' {
  const text: string;
  export default text;
}
declare module '*/web-terminal/gateway.js' {
  const text: string;
  export default text;
}
declare module '*/web-terminal/streams.js' {
  const text: string;
  export default text;
}
