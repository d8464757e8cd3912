// Output a stream has delivered, counted with the model's tokenizer when its bill needs it (the
// caller left, or the upstream sent no usage). Pieces are kept only until counted, and counted
// in batches, so following a long stream costs little.
import { countTokens, type TokenizerName } from './tokens.js';

export class OutputCounter {
  private pending: string[] = [];
  private counted = 0;
  /** Pieces of output seen (for meters that only need to know whether anything came). */
  pieces = 0;

  constructor(private readonly tokenizer: TokenizerName) {}

  add(text: unknown): void {
    if (typeof text !== 'string' || text === '') return;
    this.pending.push(text);
    this.pieces += 1;
  }

  tokens(): number {
    if (this.pending.length > 0) {
      this.counted += countTokens(this.pending.join(''), this.tokenizer);
      this.pending = [];
    }
    return this.counted;
  }
}
