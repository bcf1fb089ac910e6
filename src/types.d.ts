// Text imports (`with { type: 'text' }`) of SQL migrations, embedded in the single binary.
declare module '*.sql' {
  const content: string;
  export default content;
}
declare module 'swagger-ui-dist/swagger-ui.css' {
  const path: string;
  export default path;
}
declare module 'swagger-ui-dist/swagger-ui-bundle.js' {
  const path: string;
  export default path;
}
declare module '*.md' {
  const content: string;
  export default content;
}
declare module '*.wasm' {
  const path: string;
  export default path;
}
declare module '*.ttf' {
  const path: string;
  export default path;
}
