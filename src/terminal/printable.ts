/**
 * Text from elsewhere (the platform's answers, a receiver's port name, error messages) is shown to
 * a person on a terminal: control characters in it would be obeyed, not shown (a deviceUUID with
 * an escape sequence once reached the terminal). They become U+FFFD; tabs and newlines
 * become spaces so that one field stays on its line.
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

export function printable(text: string): string {
  return text.replace(/[\t\n\r]/g, ' ').replace(CONTROL, '\ufffd');
}
