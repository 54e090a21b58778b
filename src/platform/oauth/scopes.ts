/** Scopes as providers write them: space-separated (RFC 6749), or comma-separated (GitHub, Linear). */
export const splitScopes = (value: string): string[] => value.split(/[\s,]+/).filter(Boolean);
