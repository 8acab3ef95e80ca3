/** Names for a plan's temporary columns: `__<base><n>`, one counter for every base, never a name the frame has or one handed out before. */
export function tempNames(columns: ReadonlyArray<{ readonly name: string }>): (base: string) => string {
  const taken = new Set(columns.map((c) => c.name));
  let n = 0;
  return (base) => {
    let name: string;
    do name = `__${base}${n++}`;
    while (taken.has(name));
    taken.add(name);
    return name;
  };
}
