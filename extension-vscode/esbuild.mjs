// Bundles the extension (and vscode-languageclient) into dist/extension.js, so the .vsix needs
// no node_modules. `--tests` bundles test/*.test.ts into out/test/ for `node --test`.
import * as esbuild from 'esbuild';
import { readdirSync } from 'fs';

const production = process.argv.includes('--production');
const tests = process.argv.includes('--tests');

if (tests) {
    await esbuild.build({
        entryPoints: readdirSync('test').filter((f) => f.endsWith('.test.ts')).map((f) => `test/${f}`),
        bundle: true,
        platform: 'node',
        format: 'cjs',
        target: 'node18',
        outdir: 'out/test',
        external: ['vscode'],
        logLevel: 'warning',
    });
} else {
    await esbuild.build({
        entryPoints: ['src/extension.ts'],
        bundle: true,
        platform: 'node',
        format: 'cjs',
        // VS Code 1.82's extension host runs Node 18.
        target: 'node18',
        outfile: 'dist/extension.js',
        external: ['vscode'],
        minify: production,
        sourcemap: !production,
        sourcesContent: false,
        logLevel: 'warning',
    });
}
