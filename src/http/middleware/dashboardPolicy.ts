/**
 * What the dashboard's pages may do in the browser (issue 28 point 3). No site may frame them
 * (clickjacking: `frame-ancestors 'none'`, and X-Frame-Options for older browsers); scripts,
 * styles and API calls come from the service only, none inline (the built index.html has
 * none). Images may also come from the web, as Markdown links them (`https:`), or be blobs and
 * data URLs; a PDF preview is the service's own download address in a frame (`frame-src 'self'`:
 * it answers PDFs inline and nothing else), and blobs the page made may be read back (`connect-src blob:`).
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob: https:",
  "media-src 'self' blob:",
  "frame-src 'self'",
  "object-src 'none'",
  "connect-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The headers every dashboard page carries. */
export const DASHBOARD_PAGE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': DASHBOARD_CSP,
  'X-Frame-Options': 'DENY',
};
