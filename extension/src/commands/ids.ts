/**
 * The extension's command ids. They use the `smolInstruments.` prefix: the daemon's own
 * commands (`smol.acceptPatch` ...) are registered in VS Code by vscode-languageclient, and the
 * two must not collide.
 */
export const COMMANDS = {
  askAboutSelection: 'smolInstruments.askAboutSelection',
  newConversation: 'smolInstruments.newConversation',
  stop: 'smolInstruments.stop',
  acceptPatch: 'smolInstruments.acceptPatch',
  rejectPatch: 'smolInstruments.rejectPatch',
  showPatchDiff: 'smolInstruments.showPatchDiff',
  acceptAll: 'smolInstruments.acceptAll',
  rejectAll: 'smolInstruments.rejectAll',
  restartDaemon: 'smolInstruments.restartDaemon',
  showLog: 'smolInstruments.showLog',
  // Internal (CodeLens, panel): not in the command palette.
  askAgain: 'smolInstruments.askAgain',
  dismissPatch: 'smolInstruments.dismissPatch',
} as const;
