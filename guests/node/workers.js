// SPDX-License-Identifier: MIT OR Apache-2.0
// Four worker_threads each sum a series and post it to the main thread,
// which prints the total once every worker has answered. Expected output
// (native and under lard): "total 1799970".
const { Worker, isMainThread, parentPort, workerData } = require('worker_threads');
if (isMainThread) {
  const n = 4; let done = 0, total = 0;
  for (let i = 0; i < n; i++) {
    const w = new Worker(__filename, { workerData: i });
    w.on('message', (v) => { total += v; if (++done === n) console.log('total', total); });
  }
} else {
  let s = 0; for (let k = 0; k < 100000; k++) s += (k % 7) * workerData;
  parentPort.postMessage(s);
}
