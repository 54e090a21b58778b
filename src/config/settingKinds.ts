import { z } from 'zod';

// Each kind of setting says what it expects, as the error names it: "PORT must be …".
export const bool = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off'], 'must be true or false (or 1/0, yes/no, on/off)')
  .transform((v) => ['1', 'true', 'yes', 'on'].includes(v));
export const int = (min: number, max?: number) => {
  const expected = max === undefined ? `must be a whole number ≥ ${min}` : `must be a whole number from ${min} to ${max}`;
  const n = z.coerce.number(expected).int(expected).min(min, expected);
  return max === undefined ? n : n.max(max, expected);
};
export const url = () => z.string().url('must be a URL such as https://cns.example.com');
export const oneOf = <const T extends readonly [string, ...string[]]>(values: T) => z.enum(values, `must be one of ${values.join(', ')}`);
