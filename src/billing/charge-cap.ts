// DESIGN §3: a settle takes at most the hold plus the account's overdraft, and never takes the
// balance below minus the overdraft. What the usage came to beyond that is recorded as unbilled.

export interface CappedCharge {
  chargedMicros: number;
  unbilledMicros: number;
}

/**
 * `balanceMicros` is the balance after the hold was taken, read under the account's write lock;
 * it only matters when the charge passes the hold and the account has an overdraft.
 */
export function capCharge({
  chargeMicros,
  heldMicros,
  balanceMicros,
  overdraftMicros,
}: {
  chargeMicros: number;
  heldMicros: number;
  balanceMicros: number;
  overdraftMicros: number;
}): CappedCharge {
  let charged = Math.min(chargeMicros, heldMicros);
  if (chargeMicros > heldMicros && overdraftMicros > 0) {
    charged += Math.max(0, Math.min(chargeMicros - heldMicros, overdraftMicros, balanceMicros + overdraftMicros));
  }
  return { chargedMicros: charged, unbilledMicros: chargeMicros - charged };
}
