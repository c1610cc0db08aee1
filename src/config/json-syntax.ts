import { jsonErrorOffset, lineAndColumn } from '../system/json-position.js';

/**
 * What is wrong with a configuration file that is not JSON, for a person with an editor: the line
 * and column, and the usual causes by name. Comments come first: editors and examples elsewhere
 * write JSONC, and a commented file is what people most often bring.
 */
export function jsonSyntaxProblem(text: string, parserMessage: string): string {
  const offset = jsonErrorOffset(text);
  if (offset === undefined) return parserMessage.replace(/\s+/g, ' ');
  const { line, column } = lineAndColumn(text, offset);
  const at = `line ${line}, column ${column}`;
  const rest = text.slice(offset);
  if (rest.startsWith('//') || rest.startsWith('/*'))
    return `a comment at ${at}: the configuration is plain JSON, without comments (copy config/example.json, a complete valid file, or remove the // and /* */ parts)`;
  if (/^[}\]]/.test(rest) && /,\s*$/.test(text.slice(0, offset)))
    return `a comma before the closing bracket at ${at}: JSON allows no trailing comma`;
  if (offset >= text.trimEnd().length) return `the file ends early at ${at}: a closing } or ] or a value is missing`;
  const token = rest.slice(0, 20).split(/[\s,:]/)[0] || rest.charAt(0);
  return `unexpected ${JSON.stringify(token)} at ${at}${rest.startsWith("'") ? ': JSON strings use double quotes' : /^[A-Za-z_]/.test(rest) ? ': keys and strings need double quotes' : ''}`;
}
