// Imported first by the CLI, before restify: restify's HTTP/2 dependency (spdy) reads process.binding('http_parser')
// at import, and Node's DEP0111 warning about it would open every command's output. Other warnings still show.
const emitWarning = process.emitWarning.bind(process);
process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
  const code = typeof rest[0] === 'object' && rest[0] !== null ? (rest[0] as { code?: string }).code : rest[1];
  if (code === 'DEP0111') return;
  (emitWarning as (...args: unknown[]) => void)(warning, ...rest);
}) as typeof process.emitWarning;
