// Why a call's signal fired: its caller left, or its own deadline passed.

/** The call's own deadline (AbortSignal.timeout), as against a client that left. */
const isDeadline = (reason: unknown) => reason instanceof DOMException && reason.name === 'TimeoutError';

/** The call's signal fired because its caller left (not because its deadline passed). */
export const callerLeft = (signal: AbortSignal) => signal.aborted && !isDeadline(signal.reason);
