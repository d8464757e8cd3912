// An upload's `purpose` field (OpenAI's Files API), sent before or after the file part: the
// OpenAI SDKs send it after. `batch` marks a batch's input file (POST /v1/batches reads it).
import type { MultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { invalidRequest } from '../errors.js';
import { fileSentAsText } from '../http/uploads.js';

export const FILE_PURPOSES = ['batch', 'user_data', 'assistants', 'vision', 'fine-tune', 'evals'] as const;

export interface FileUpload {
  /** The first file part. */
  part: MultipartFile;
  /** The upload's purpose, once the file part has been read whole: the text fields after it are read then. */
  purpose(): Promise<string | null>;
}

function readPurpose(value: unknown): string | null {
  if (value === undefined) return null;
  if (typeof value !== 'string' || !(FILE_PURPOSES as readonly string[]).includes(value)) {
    throw invalidRequest(`purpose: must be one of ${FILE_PURPOSES.map((p) => JSON.stringify(p)).join(', ')}`);
  }
  return value;
}

/**
 * The body's first file part, with the `purpose` text field wherever it comes; other text fields
 * are passed over. A text field named `file` before the file is refused (as firstFilePart does).
 */
export async function fileUpload(request: FastifyRequest): Promise<FileUpload | undefined> {
  const parts = request.parts()[Symbol.asyncIterator]();
  let purpose: unknown;
  for (;;) {
    const next = await parts.next();
    if (next.done) return undefined;
    const part = next.value;
    if (part.type === 'file') {
      return {
        part,
        async purpose() {
          for (;;) {
            const after = await parts.next();
            if (after.done) break;
            if (after.value.type === 'file')
              after.value.file.resume(); // only the first file is kept
            else if (after.value.fieldname === 'purpose') purpose = after.value.value;
          }
          return readPurpose(purpose);
        },
      };
    }
    if (part.fieldname === 'file') throw fileSentAsText();
    if (part.fieldname === 'purpose') purpose = part.value;
  }
}
