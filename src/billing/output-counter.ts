// Output a stream has delivered, counted with the model's tokenizer when its bill needs it (the
// caller left, or the upstream sent no usage). The output is kept only until counted, as UTF-8 in
// one buffer a stream: a string a piece would be objects held for the stream's life, which the
// collector copies, and promotes when the stream outlives its young generation.
import { countTokens, type TokenizerName } from './tokens.js';

const FIRST_CAPACITY = 512;
/** The most UTF-8 bytes one UTF-16 code unit takes. */
const BYTES_A_UNIT = 3;

export class OutputCounter {
  private pending: Buffer | undefined;
  private pendingLength = 0;
  /** A high surrogate that ended the last piece: its pair may begin the next one. */
  private carry = '';
  private counted = 0;
  /** Pieces of output seen (for meters that only need to know whether anything came). */
  pieces = 0;

  constructor(private readonly tokenizer: TokenizerName) {}

  add(text: unknown): void {
    if (typeof text !== 'string' || text === '') return;
    const joined = this.carry === '' ? text : this.carry + text;
    const last = joined.charCodeAt(joined.length - 1);
    const cutPair = last >= 0xd800 && last <= 0xdbff;
    this.carry = cutPair ? joined.slice(-1) : '';
    this.write(cutPair ? joined.slice(0, -1) : joined);
    this.pieces += 1;
  }

  /** A piece as the UTF-8 bytes `bytes[start, end)`, copied without being decoded. */
  addBytes(bytes: Buffer, start: number, end: number): void {
    if (end <= start) return;
    this.flushCarry();
    this.reserve(end - start);
    this.pendingLength += bytes.copy(this.pending!, this.pendingLength, start, end);
    this.pieces += 1;
  }

  /** The output not yet counted. */
  pendingText(): string {
    return (this.pending?.toString('utf8', 0, this.pendingLength) ?? '') + this.carry;
  }

  tokens(): number {
    this.flushCarry();
    if (this.pendingLength > 0) {
      this.counted += countTokens(this.pendingText(), this.tokenizer);
      this.pendingLength = 0;
    }
    return this.counted;
  }

  private write(text: string): void {
    if (text === '') return;
    this.reserve(text.length * BYTES_A_UNIT);
    this.pendingLength += this.pending!.write(text, this.pendingLength);
  }

  private flushCarry(): void {
    const carry = this.carry;
    this.carry = '';
    this.write(carry);
  }

  private reserve(bytes: number): void {
    const needed = this.pendingLength + bytes;
    if (this.pending && needed <= this.pending.length) return;
    const grown = Buffer.allocUnsafe(Math.max(needed, (this.pending?.length ?? FIRST_CAPACITY / 2) * 2));
    this.pending?.copy(grown, 0, 0, this.pendingLength);
    this.pending = grown;
  }
}
