// The rows that lines of the settle journal (settle-journal.ts) stand for, written into SQLite: a
// settle answered already, and a stream's hold that a restart found without its settle. Either may
// be in the store already (written before a crash, or by a run's age timer): its hold row says so.
import type { AnsweredSettle } from './settle-journal.js';
import type { SqliteSteps } from './sqlite-steps.js';
import type { HoldEntry, HotLedgerLog } from './types.js';

const CUT_OFF_NOTE = 'recovered: its instance stopped before the call ended';

const rowThere = (error: unknown) => (error as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY';

export function journaledRows(steps: Pick<SqliteSteps, 'holdAndSettleAnswered' | 'holdAndRelease'>, noteSettle: () => void, log?: HotLedgerLog) {
  return {
    /** A settle answered already: its rows, unless a run before a restart wrote them. */
    writeAnswered({ hold: h, settle: e }: AnsweredSettle) {
      let written: ReturnType<typeof steps.holdAndSettleAnswered>;
      try {
        written = steps.holdAndSettleAnswered(h, e);
      } catch (error) {
        if (rowThere(error)) return; // written
        throw error;
      }
      noteSettle();
      if (!written.uncovered) return;
      const { chargedMicros, unbilledMicros } = written;
      log?.warn(
        { holdId: h.holdId, model: h.model, chargedMicros, unbilledMicros },
        'another process spent the balance of a call already answered: charged what was left, the rest recorded unbilled',
      );
    },
    /**
     * A stream's hold journaled by a run that stopped before its settle: held and released at once.
     * Its stream recorded no progress (that needs the hold's row), so the recovery sweep would
     * release it too. When the row is there, the sweep ends it from what it recorded.
     */
    endCutOff(h: HoldEntry) {
      try {
        steps.holdAndRelease(h, { note: CUT_OFF_NOTE, now: Date.now() });
      } catch (error) {
        if (!rowThere(error)) throw error;
      }
    },
  };
}
