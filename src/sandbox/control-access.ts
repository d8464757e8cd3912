// Who may use the sandbox's control API (/__sandbox/faults, /__sandbox/requests): programs on this
// machine alone, whatever address the sandbox listens on, and nobody when the sandbox runs beside real
// channels (it then serves test keys, and its request log would hold their calls' bodies).

/** `loopback`: control requests from this machine only; `off`: no control API and no request log. */
export type SandboxControl = 'loopback' | 'off';

/** A loopback address as a socket reports it: 127.0.0.0/8, ::1, or 127.x mapped into IPv6. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return address === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/** Why a control request is refused (status and message), or undefined when it may go on. */
export function controlRefusal(control: SandboxControl, remoteAddress: string | undefined): { status: number; message: string } | undefined {
  if (control === 'off') return { status: 404, message: 'the sandbox control API is off: this sandbox runs beside real channels' };
  if (!isLoopbackAddress(remoteAddress)) return { status: 403, message: 'the sandbox control API answers on loopback only' };
  return undefined;
}
