// Bundles the extension (Node, `vscode` external) and the chat panel page (browser).
//   node esbuild.mjs               development build into out/
//   node esbuild.mjs --production  minified, no source maps (what the .vsix ships)
//   node esbuild.mjs --watch
import * as esbuild from 'esbuild';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

/** @type {import('esbuild').BuildOptions} */
const common = {
  bundle: true,
  minify: production,
  sourcemap: production ? false : 'linked',
  // The packaged build says only what is wrong: its size table marks big bundles with ⚠️,
  // which reads as a warning in a set-up log and is none.
  logLevel: production ? 'warning' : 'info',
  legalComments: 'none',
};

const builds = [
  {
    ...common,
    entryPoints: ['extension/src/extension.ts'],
    outfile: 'out/extension.js',
    platform: 'node',
    format: 'cjs',
    target: 'node18',
    external: ['vscode'],
  },
  {
    ...common,
    entryPoints: ['extension/webview/main.ts'],
    outfile: 'out/webview/main.js',
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
  },
];

if (watch) {
  for (const options of builds) {
    const context = await esbuild.context(options);
    await context.watch();
  }
} else {
  await Promise.all(builds.map((options) => esbuild.build(options)));
}
