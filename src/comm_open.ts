/**
 * Opening and closing the `tilelab` comm. JupyterLab sends a comm's messages
 * over a kernel subshell when the kernel has them (ipykernel 7): the kernel
 * then answers while a cell runs, so a running tune fills the panel as it
 * goes. Opened before its subshell exists, the comm would wait in the main
 * shell's queue behind that cell.
 */

import type { Kernel } from '@jupyterlab/services';

/** How long a comm waits for its kernel subshell before it opens on the main shell. */
const SUBSHELL_WAIT_MS = 5000;

/** Resolves once `comm`'s subshell exists, or the kernel has none, or after SUBSHELL_WAIT_MS; never rejects. */
export async function waitForSubshell(kernel: Kernel.IKernelConnection, comm: Kernel.IComm): Promise<void> {
  const started = (comm as { subshellStarted?: Promise<void> }).subshellStarted;
  const subshell = async (): Promise<void> => {
    await kernel.info;
    if (kernel.supportsSubshells && String(comm.commsOverSubshells) !== 'disabled' && started !== undefined) {
      await started;
    }
  };
  let timer = 0;
  // A subshell asked for while the kernel restarts may never come: then the main shell, after a while.
  const late = new Promise<void>(resolve => (timer = window.setTimeout(resolve, SUBSHELL_WAIT_MS)));
  try {
    await Promise.race([subshell(), late]);
  } catch {
    // No subshell after all: the main shell answers once it is idle.
  } finally {
    window.clearTimeout(timer);
  }
}

/** Close `comm`, or dispose of it where the kernel is gone already (it cannot send its close). */
export function closeComm(comm: Kernel.IComm): void {
  try {
    void comm.close().done.catch(() => undefined);
  } catch {
    comm.dispose();
  }
}
