// The meter of a streamed transcription: `transcript.text.delta` events, then `transcript.text.done`
// (the end marker, with the usage). The usage comes only with the end, so a caller who leaves is
// billed by a rule of the gateway's own (DESIGN §5): nothing before the first text arrived, the
// whole audio's length once any had (the text covers audio the upstream has already heard).
import type { Units } from '../../billing/prices.js';
import type { ModelConfig } from '../../config/schema.js';
import type { AudioCovered, StreamMeter } from '../../pipeline/types.js';
import { billedUnits, type ReportedUsage, reportedUsage } from './usage.js';

export interface TranscriptionEvent {
  type?: unknown;
  delta?: unknown;
  error?: unknown;
}

export class TranscriptionStreamMeter implements StreamMeter {
  failed = false;
  private ended = false;
  private textSeen = false;
  private usage: ReportedUsage | undefined;

  constructor(
    private readonly model: ModelConfig,
    /** The hold's units: the audio's measured length, in the units the model is priced in. */
    private readonly estimate: Units,
  ) {}

  get completed(): boolean {
    return this.ended && !this.failed;
  }

  /** One event of the upstream's stream, as it goes to the caller. */
  observe(event: TranscriptionEvent): void {
    if (event.error !== undefined || event.type === 'error') this.failed = true;
    else if (event.type === 'transcript.text.delta') {
      if (typeof event.delta === 'string' && event.delta !== '') this.textSeen = true;
    } else if (event.type === 'transcript.text.done') {
      this.ended = true;
      this.usage = reportedUsage(event);
    }
  }

  reported(): Units | undefined {
    return this.ended ? billedUnits(this.usage, this.model, this.estimate) : undefined;
  }

  /** What a crash or a caller leaving bills: the whole audio once text came, nothing before. */
  delivered(): Units {
    return this.textSeen ? this.estimate : {};
  }

  audioCovered(): AudioCovered {
    return this.textSeen ? { kind: 'measured', units: this.estimate } : { kind: 'none' };
  }
}
