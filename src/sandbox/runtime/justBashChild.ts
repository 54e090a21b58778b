import { runJustBashJob, type JustBashJob } from './justBashJob.ts';

/**
 * Body of a just-bash child process: runs the jobs it is sent over IPC, one at a time. It is a
 * process, not a worker thread, because just-bash's interpreter does not yield inside a loop
 * (it must not run on the service's event loop) and because V8 running out of heap in a worker
 * thread can abort the whole process: here it only ends this child.
 */
process.on('message', (job: JustBashJob) => {
  process.send!({ type: 'started' });
  runJustBashJob(job).then(
    (result) => process.send!({ type: 'done', result }),
    (err: unknown) => process.send!({ type: 'failed', message: err instanceof Error ? err.message : String(err) }),
  );
});
