// tollroute.yaml `redemption:`: how redemption codes are made and how often a wrong one may be tried.
import { z } from 'zod';

export const RedemptionConfigSchema = z
  .object({
    // Codes an account may try in one window without crediting anything (unknown, already redeemed
    // or expired); past them every try, a right code too, is answered 429 until the window ends.
    wrong_codes_per_window: z.number().int().min(1).default(10),
    // The window's length: fixed windows from the epoch, counted in the store so every instance shares them.
    wrong_code_window_seconds: z.number().int().min(1).default(3600),
  })
  .strict()
  .default({});

export type RedemptionConfig = z.infer<typeof RedemptionConfigSchema>;
