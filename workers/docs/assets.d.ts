/**
 * The Swagger UI files the worker serves on /docs, imported as text: by esbuild through launcher/workerAssets.ts
 * (`npm start`, the tests) and by wrangler through the `Text` rule in wrangler.toml.
 */
declare module 'swagger-ui-dist/swagger-ui-bundle.js' {
  const text: string;
  export default text;
}
declare module 'swagger-ui-dist/swagger-ui.css' {
  const text: string;
  export default text;
}
