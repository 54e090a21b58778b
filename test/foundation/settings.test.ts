import test from 'ava';
import { runCli } from '../../src/cli/runCli.ts';
import { loadSettings } from '../../src/config/settings.ts';
import { cleanEnv, memoryIo } from '../helpers/cliIo.ts';

const serve = async (args: string[], env: Record<string, string> = {}) => {
  const m = memoryIo({ env: { ...cleanEnv(), ...env } });
  return { code: await runCli(['serve', ...args], m.io), stderr: m.stderr(), stdout: m.stdoutBytes().toString() };
};

test('a bad setting is named as the user gave it (flag or variable) with what is expected', async (t) => {
  const flag = await serve(['--port', 'x', '--host', '127.0.0.1'], { CNS_LOG_LEVEL: 'loud' });
  t.is(flag.code, 2);
  t.is(
    flag.stderr,
    'cns: Invalid settings: --port must be a whole number from 0 to 65535 (got "x"); ' +
      'CNS_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")\n',
  );
  const variable = await serve(['--host', '127.0.0.1'], { PORT: '70000' });
  t.is(variable.code, 2);
  t.is(variable.stderr, 'cns: Invalid settings: PORT must be a whole number from 0 to 65535 (got "70000")\n');
  const level = await serve(['--log-level', 'chatty']);
  t.regex(level.stderr, /^cns: Invalid settings: --log-level must be one of fatal, /);
  t.is(flag.stdout + variable.stdout, '', 'nothing started');
});

test('each kind of setting says what it expects', (t) => {
  const error = (env: Record<string, string>) => t.throws(() => loadSettings(env)).message;
  t.is(error({ CNS_FSYNC: 'maybe' }), 'Invalid settings: CNS_FSYNC must be true or false (or 1/0, yes/no, on/off) (got "maybe")');
  t.is(error({ CNS_BASE_URL: 'not a url' }), 'Invalid settings: CNS_BASE_URL must be a URL such as https://cns.example.com (got "not a url")');
  t.is(error({ CNS_ADMIN_EMAIL: 'nobody' }), 'Invalid settings: CNS_ADMIN_EMAIL must be an email address (got "nobody")');
  t.is(error({ CNS_ADMIN_PASSWORD: 'short' }), 'Invalid settings: CNS_ADMIN_PASSWORD must have at least 8 characters');
  t.is(error({ CNS_INGEST_WORKERS: '1.5' }), 'Invalid settings: CNS_INGEST_WORKERS must be a whole number from 1 to 64 (got "1.5")');
  t.is(error({ CNS_BODY_LIMIT_BYTES: '12' }), 'Invalid settings: CNS_BODY_LIMIT_BYTES must be a whole number ≥ 1024 (got "12")');
  t.is(error({ CNS_SANDBOX: 'docker' }), 'Invalid settings: CNS_SANDBOX must be one of auto, bwrap, just-bash (got "docker")');
});
