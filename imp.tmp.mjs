const t0 = performance.now();
await import(process.argv[2]);
console.log(process.argv[2].split('/').pop(), Math.round(performance.now() - t0), 'ms');
