import { exitCodesHelp } from './exitCodes.ts';

/** Appended to `cns --help`: where the client commands get their server, token and project. */
export const clientHelp = `
Client commands (login … clone) talk to a server's REST API:
  server   --server, else CNS_SERVER, else the last \`cns login\`
  token    --token, else CNS_TOKEN, else the sign-in stored by \`cns login\` in
           $XDG_CONFIG_HOME/cns/credentials.json (mode 0600, one entry per server)
  project  --project (id or name), else CNS_PROJECT, else \`cns use\` (per server);
           an access key always uses its own project
  --json prints the API's data as JSON on stdout; errors and progress go to stderr.
  --server, --token, --project and --json go before or after the command.

${exitCodesHelp}`;
