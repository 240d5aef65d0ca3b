// Unit tests of the parts without VS Code (run by `npm test`: esbuild, then node --test).
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as path from 'path';
import {
    describeStats,
    findServer,
    median,
    modelName,
    resolvePath,
    SERVER_KEYS,
    serverLanguageId,
    serverSettings,
    SettingValue,
    vscodeLanguages,
} from '../src/config';

const ctx = { workspaceFolder: '/ws', home: '/home/me' };

function reader(values: Record<string, unknown>): (k: string) => SettingValue {
    return (k) => ({ value: values[k], set: k in values });
}

test('only keys the user set are sent, all of them known to the server', () => {
    const { settings, problems } = serverSettings(reader({}), ctx);
    assert.deepEqual(settings, {});
    assert.deepEqual(problems, []);
    const all = serverSettings(
        reader({
            ghostText: false,
            completion: true,
            diagnostics: true,
            languages: ['markdown', 'git-commit'],
            modelPath: '~/m.gguf',
            multilingualModelPath: '~/gemma.gguf',
            lexiconPath: '${workspaceFolder}/lex.tsv',
            userDictionary: 'words.txt',
            memoryBudgetMb: 128.4,
            threshold: 0.5,
            diagnosticSeverity: 'hint',
            debounceMs: 100,
            latencyBudgetMs: 300,
            workAhead: false,
            recall: false,
        }),
        ctx,
    );
    assert.deepEqual(all.problems, []);
    assert.deepEqual(Object.keys(all.settings).sort(), [...SERVER_KEYS].sort());
    assert.equal(all.settings.ghostText, false);
    assert.deepEqual(all.settings.languages, ['markdown', 'gitcommit']);
    assert.equal(all.settings.modelPath, path.normalize('/home/me/m.gguf'));
    assert.equal(all.settings.multilingualModelPath, path.normalize('/home/me/gemma.gguf'));
    assert.equal(all.settings.lexiconPath, path.normalize('/ws/lex.tsv'));
    assert.equal(all.settings.userDictionary, path.normalize('/ws/words.txt'));
    assert.equal(all.settings.memoryBudgetMb, 128);
});

test('a change says the keys the user does not set as null, back to the default', () => {
    const { settings } = serverSettings(reader({ threshold: 0.3, modelPath: '' }), ctx, true);
    assert.deepEqual(Object.keys(settings).sort(), [...SERVER_KEYS].sort());
    assert.equal(settings.threshold, 0.3);
    assert.equal(settings.modelPath, null);
    assert.equal(settings.debounceMs, null);
});

test('empty and invalid values are left out, and said', () => {
    const { settings, problems } = serverSettings(
        reader({ modelPath: '', languages: [], threshold: 2, diagnosticSeverity: 'loud', debounceMs: -1, ghostText: 'yes' }),
        ctx,
    );
    assert.deepEqual(settings, {});
    assert.equal(problems.length, 4);
    assert.ok(problems.some((p) => p.includes('threshold')));
    const noFolder = serverSettings(reader({ userDictionary: 'words.txt' }), {});
    assert.deepEqual(noFolder.settings, {});
    assert.ok(noFolder.problems[0].includes('relative'));
});

test('language ids', () => {
    assert.equal(serverLanguageId('git-commit'), 'gitcommit');
    assert.equal(serverLanguageId('markdown'), 'markdown');
    assert.deepEqual(vscodeLanguages({}), ['markdown', 'plaintext', 'git-commit', 'latex', 'restructuredtext']);
    assert.deepEqual(vscodeLanguages({ languages: ['gitcommit', 'asciidoc'] }), ['git-commit', 'asciidoc']);
});

test('paths', () => {
    assert.equal(resolvePath('/abs/x', {}), path.normalize('/abs/x'));
    assert.equal(resolvePath('rel/x', {}), undefined);
    assert.equal(resolvePath('${workspaceFolder}/x', {}), undefined);
});

test('the server is found by setting, then PATH, then bundled', () => {
    const files = new Set(['/opt/laya/laya', '/usr/bin/laya', '/ext/bin/laya', '/ws/target/release/laya']);
    const exists = (p: string) => files.has(p);
    assert.deepEqual(findServer('target/release/laya', ctx, '/usr/bin', '/ext', exists), {
        path: '/ws/target/release/laya',
        how: 'setting',
    });
    assert.equal(findServer('/nope/laya', ctx, '/usr/bin', '/ext', exists).how, 'setting-missing');
    assert.deepEqual(findServer('', ctx, '/x:/usr/bin', '/ext', exists), { path: '/usr/bin/laya', how: 'PATH' });
    assert.deepEqual(findServer('', ctx, '/x', '/ext', exists), { path: '/ext/bin/laya', how: 'bundled' });
    assert.deepEqual(findServer('', ctx, '/x', '/elsewhere', exists), { how: 'none' });
});

test('status bar', () => {
    assert.equal(median([]), undefined);
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 2, 3]), 2.5);
    assert.equal(modelName('/m/SmolLM2-135M-Instruct.Q4_1.gguf'), 'SmolLM2-135M-Instruct.Q4_1');
    assert.equal(describeStats({ model_state: 'loading' }, true).text, 'Laya: loading…');
    const failed = describeStats({ model_state: 'failed: no such file' }, true);
    assert.equal(failed.text, 'Laya: no model');
    assert.ok(failed.tooltip.includes('no such file') && failed.failed);
    const ready = describeStats(
        { model_state: 'ready', engine: { model: 'SmolLM2-135M-Instruct.Q4_1.gguf', ghost_ms: [10, 30, 20], check_ms: [] } },
        true,
    );
    assert.equal(ready.text, 'Laya: SmolLM2-135M-Instruct.Q4_1 · 20 ms');
    assert.ok(ready.tooltip.includes('median 20 ms'));
    assert.equal(
        describeStats({ model_state: 'ready', engine: { model: 'm.gguf' } }, false).text,
        'Laya: m (ghost text off)',
    );
});
