// A settle the test lands by hand, for the end-marker gate's tests: the gate asks for it, and the
// held output goes on once the test calls land().
export function pendingSettle() {
  let land = () => {};
  const landed = new Promise<void>((resolve) => {
    land = resolve;
  });
  let asked = 0;
  const settle = () => {
    asked += 1;
    return landed;
  };
  return { settle, land, asked: () => asked };
}
