/**
 * Fitting the status text to where it goes: `--watch` redraws in place, so
 * its frame must never be taller or wider than the terminal (a wrapped or extra line scrolls the
 * screen and every later frame lands lower); a one-off `status` or `doctor` on a terminal wraps long
 * lines under their label instead of cutting them; in a pipe the text goes out whole.
 */

// eslint-disable-next-line no-control-regex
const SGR = /\u001b\[[0-9;]*m/y;

/** Visible characters of a line (colour sequences take no room). */
export function visibleLength(line: string): number {
  // eslint-disable-next-line no-control-regex
  return [...line.replace(/\u001b\[[0-9;]*m/g, '')].length;
}

/** The line cut to `width` visible characters, with an ellipsis and colour reset when it was cut. */
export function clipLine(line: string, width: number): string {
  if (visibleLength(line) <= width) return line;
  let out = '';
  let shown = 0;
  let coloured = false;
  for (let i = 0; i < line.length; ) {
    SGR.lastIndex = i;
    const m = SGR.exec(line);
    if (m) {
      out += m[0];
      coloured = true;
      i += m[0].length;
      continue;
    }
    const ch = String.fromCodePoint(line.codePointAt(i)!);
    if (shown === width - 1) break;
    out += ch;
    shown++;
    i += ch.length;
  }
  return `${out}…${coloured ? '\u001b[0m' : ''}`;
}

/** At most `rows` lines, each at most `cols` wide; the last kept line says how many were left out. */
export function fitToScreen(text: string, rows: number, cols: number): string {
  const lines = text.replace(/\n$/, '').split('\n');
  const room = Math.max(1, rows);
  const kept =
    lines.length <= room ? lines : [...lines.slice(0, room - 1), `… ${lines.length - room + 1} more lines: enlarge the terminal`];
  return `${kept.map((l) => clipLine(l, Math.max(10, cols))).join('\n')}\n`;
}

/**
 * Every line longer than `width` wrapped at spaces; continuation lines are indented by `indent`
 * spaces (under the text, past the label). A word longer than the room gets a line of its own.
 */
export function wrapToWidth(text: string, width: number, indent: number): string {
  const out: string[] = [];
  const pad = ' '.repeat(indent);
  for (const line of text.replace(/\n$/, '').split('\n')) {
    if (visibleLength(line) <= width) {
      out.push(line);
      continue;
    }
    const lead = /^ */.exec(line)![0];
    let current = lead;
    let empty = true;
    for (const word of line.slice(lead.length).split(' ')) {
      if (!empty && visibleLength(current) + 1 + visibleLength(word) > width) {
        out.push(current);
        current = `${pad}${word}`;
      } else current = empty ? `${current}${word}` : `${current} ${word}`;
      empty = false;
    }
    out.push(current);
  }
  return `${out.join('\n')}\n`;
}
