/** `--name N` from the command line: a number >= 0, else the fallback (the benches' one flag reader). */
export function numberArg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${name} must be a number >= 0`);
  return v;
}
