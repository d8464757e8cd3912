// An account's uploads in flight on this instance take their room in its file quota before their
// bytes are written: uploads running side by side can never together put more on the disk than the
// quota, even for a moment (the row's check in quota.ts stays the final word, across instances too).
// An upload claims what its request declares (Content-Length) at once, so side by side the first
// ones fit whole rather than every one getting a share too small to finish; it takes more as bytes
// arrive past its claim, and gives back what it did not use.

export interface UploadRoom {
  /** Bytes this upload may still take now. */
  freeBytes(): number;
  /** Uses `bytes` of room, from the claim first; false (using nothing) when the quota has not that much left. */
  take(bytes: number): boolean;
  /** Ends the upload: a kept file keeps the room it used (its row now holds it), the rest goes back. */
  close(outcome: { kept: boolean }): void;
}

export interface UploadRooms {
  /**
   * Opens an upload's room for the account, claiming up to `claimBytes` of what is free at once;
   * `readUsedBytes` reads its stored files' total when needed.
   */
  open(accountId: string, opts: { claimBytes: number; readUsedBytes: () => Promise<number> }): Promise<UploadRoom>;
}

interface AccountRoom {
  /** The stored files' total when the account's first upload in flight began. */
  storedBytes: number;
  /** Taken since by its uploads: in flight, or finished and kept, while any of them still runs. */
  takenBytes: number;
  uploads: number;
}

export function createUploadRooms({ quotaBytes }: { quotaBytes: number }): UploadRooms {
  // Only accounts with an upload in flight: an entry ends with its last upload, and the next one
  // reads the stored total afresh (files kept meanwhile are in it then; files deleted are not).
  const accounts = new Map<string, AccountRoom>();
  return {
    async open(accountId, { claimBytes, readUsedBytes }) {
      let account = accounts.get(accountId);
      if (!account) {
        const storedBytes = await readUsedBytes();
        // another upload of the account may have opened it during the read
        account = accounts.get(accountId) ?? { storedBytes, takenBytes: 0, uploads: 0 };
        accounts.set(accountId, account);
      }
      const room = account;
      room.uploads += 1;
      const free = () => quotaBytes - room.storedBytes - room.takenBytes;
      // taken from the account's room for this upload, and used of it by bytes written
      let held = Math.max(0, Math.min(claimBytes, free()));
      let used = 0;
      room.takenBytes += held;
      let closed = false;
      return {
        freeBytes: () => held - used + free(),
        take(bytes) {
          if (closed) return false;
          const more = used + bytes - held;
          if (more > 0) {
            if (more > free()) return false;
            room.takenBytes += more;
            held += more;
          }
          used += bytes;
          return true;
        },
        close({ kept }) {
          if (closed) return;
          closed = true;
          room.takenBytes -= kept ? held - used : held;
          room.uploads -= 1;
          if (room.uploads === 0 && accounts.get(accountId) === room) accounts.delete(accountId);
        },
      };
    },
  };
}
