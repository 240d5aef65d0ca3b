// The real-editor test of Laya's VS Code extension: drives VS Code (code-server, already started
// with the extension installed; see scripts/test-vscode-extension.sh) in headless chromium through
// playwright-core, in a Markdown file:
//   1. "The capital of France is " makes ghost text appear; Tab accepts it; the line ends "Paris";
//      then a fast typist (35 ms a key, faster than VS Code's inline-completion debounce, so it
//      cancels and reissues its request at every key): ghost text after a space and mid-word,
//      each read from the rendered editor, and Tab accepts each;
//      then, in zh.md, Chinese typed as an input method commits it gets ghost text from the
//      multilingual model, and Tab accepts it;
//   2. "recieve" gets a squiggle; Ctrl+. offers Replace with "receive", which corrects it;
//   3. Laya: Add Word to Dictionary on "libary" takes its squiggle away;
//   4. Laya: Toggle Ghost Text turns ghost text off (a setting sent without a restart);
//   5. a Git commit message (git-commit) gets its squiggle too (sent to the server as gitcommit);
//   6. laya.modelPath naming no file: the status bar says "Laya: no model";
//   7. laya.path naming no file restarts the server into the "not found" error.
// A screenshot of each step goes to $LAYA_VSCODE_ARTIFACTS. Exits non-zero on any failure.
'use strict';

const fs = require('fs');
const path = require('path');

const env = (k) => {
    const v = process.env[k];
    if (!v) {
        console.error(`vscode test: ${k} is not set (run scripts/test-vscode-extension.sh)`);
        process.exit(2);
    }
    return v;
};
const { chromium } = require(env('LAYA_PLAYWRIGHT_CORE'));
const url = env('LAYA_VSCODE_URL');
const workspace = env('LAYA_VSCODE_WORKSPACE');
const artifacts = env('LAYA_VSCODE_ARTIFACTS');
const chromiumPath = process.env.LAYA_CHROMIUM || '/usr/bin/chromium';
const settingsFile = env('LAYA_VSCODE_SETTINGS');
const file = path.join(workspace, 'notes.md');

const MODEL_TIMEOUT_MS = 240_000;
const GHOST_TIMEOUT_MS = 30_000;
const SQUIGGLE_TIMEOUT_MS = 60_000;
const TOTAL_TIMEOUT_MS = 9 * 60_000;

const t0 = Date.now();
const log = (msg) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${msg}`);
const shots = [];
let page;

async function shot(name) {
    const p = path.join(artifacts, `${name}.png`);
    try {
        await page.screenshot({ path: p });
        shots.push(p);
    } catch (e) {
        log(`(no screenshot ${name}: ${e.message})`);
    }
    return p;
}

/** Polls `fn` until it returns something truthy; returns it, or undefined after `ms`. */
async function until(fn, ms, every = 250) {
    const end = Date.now() + ms;
    for (;;) {
        const v = await fn();
        if (v) {
            return v;
        }
        if (Date.now() > end) {
            return undefined;
        }
        await page.waitForTimeout(every);
    }
}

/** Laya's status bar item: its text and tooltip (aria-label), or undefined. */
async function layaStatus() {
    return page.evaluate(() => {
        // The item's id is "<extension id>.laya.status"; status bar messages (left) are not it.
        const byId = [...document.querySelectorAll('.statusbar-item')].filter((e) => e.id.endsWith('laya.status'));
        for (const el of byId.length > 0 ? byId : document.querySelectorAll('.statusbar-item.right')) {
            const text = (el.textContent || '').replace(/\s+/g, ' ').trim();
            if (text.startsWith('Laya:')) {
                const a = el.querySelector('a') || el;
                return { text, tooltip: a.getAttribute('aria-label') || el.getAttribute('aria-label') || '' };
            }
        }
        return undefined;
    });
}

/** The ghost text on screen (VS Code renders it in elements with ghost-text classes). */
async function ghostText() {
    return page.evaluate(() =>
        [...document.querySelectorAll('.monaco-editor [class*="ghost-text"]')]
            .filter((e) => e.getBoundingClientRect().width > 0)
            .map((e) => (e.textContent || '').replace(/\u00a0/g, ' '))
            .join('')
            .trim(),
    );
}

async function squiggles() {
    return page.evaluate(() =>
        [...document.querySelectorAll('.monaco-editor .view-overlays [class*="squiggly-"]')]
            .filter((e) => e.getBoundingClientRect().width > 0)
            .map((e) =>
            [...e.classList].find((c) => c.startsWith('squiggly-')),
        ),
    );
}

/** Saves the editor (Ctrl+S) and waits for the file on disk (`from`, notes.md unless named) to
 * satisfy `ok`. */
async function saveAndRead(ok, ms = 15_000, from = file) {
    // Saved again on every look: an edit that lands after the first Ctrl+S (a quick fix is
    // applied asynchronously after Enter) would otherwise stay unsaved and the file stale.
    const text = await until(async () => {
        await page.keyboard.press('Control+S');
        await page.waitForTimeout(100);
        const t = fs.readFileSync(from, 'utf8');
        return ok(t) ? t : undefined;
    }, ms, 400);
    return text ?? fs.readFileSync(from, 'utf8');
}

function lineWith(text, needle) {
    return text.split('\n').find((l) => l.includes(needle));
}

/** The text of the notification toasts on screen. */
async function notificationText() {
    return page.evaluate(() =>
        [...document.querySelectorAll('.notifications-toasts .notification-list-item, .notifications-center .notification-list-item')]
            .map((e) => e.getAttribute('aria-label') || e.textContent || '')
            .join(' | '),
    );
}

/** Sets a machine-overridable setting in the Settings editor (code-server lists those under
 * Remote, not User). */
async function setInSettingsEditor(key, value) {
    const editor = page.locator('.settings-editor');
    if (!(await editor.isVisible())) {
        await runCommand('Preferences: Open Settings (UI)');
        await editor.waitFor({ timeout: 20_000 });
        await page.waitForTimeout(500);
    }
    // The search box is an editor that takes focus a moment after a click: retry until it has
    // the key.
    const searchText = () =>
        page.evaluate(() => (document.querySelector('.settings-editor .suggest-input-container .view-lines')?.textContent || '').replace(/\u00a0/g, ' '));
    const searched = await until(async () => {
        await page.locator('.settings-editor .suggest-input-container .view-lines').first().click();
        await page.waitForTimeout(300);
        await page.keyboard.press('Control+A');
        await page.keyboard.type(key, { delay: 20 });
        await page.waitForTimeout(300);
        return (await searchText()).trim() === key;
    }, 20_000, 500);
    if (!searched) {
        throw new Error(`could not search the Settings editor for ${key} (it has ${JSON.stringify(await searchText())})`);
    }
    await page.locator('.settings-editor .settings-tabs-widget .action-label', { hasText: 'Remote' }).first().click({ timeout: 20_000 });
    // The list re-renders as the search settles: retry until the value is in.
    const input = page.locator(`.settings-editor input[aria-label="${key}"]`).first();
    const done = await until(async () => {
        try {
            await input.waitFor({ state: 'visible', timeout: 5_000 });
            await page.waitForTimeout(500);
            await input.fill(value, { timeout: 5_000 });
            await page.keyboard.press('Tab');
            return (await input.inputValue({ timeout: 2_000 })) === value;
        } catch {
            return false;
        }
    }, 30_000, 500);
    if (!done) {
        throw new Error(`could not set ${key} in the Settings editor`);
    }
}

/** Runs a command from the Command Palette (F1) by its title. */
async function runCommand(title) {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 10_000 });
    await input.fill(`>${title}`);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor({ timeout: 15_000 });
    await page.keyboard.press('Enter');
    await input.waitFor({ state: 'hidden', timeout: 10_000 }).catch(() => {});
}

async function typeSlowly(text) {
    await page.keyboard.type(text, { delay: 60 });
}

/** A fast typist: 35 ms a key (about 170 words a minute). */
async function typeFast(text) {
    await page.keyboard.type(text, { delay: 35 });
}

async function openFile(name) {
    // Quick Open (Ctrl+P) first; the Explorer as a fallback.
    await page.locator('.monaco-workbench').click({ position: { x: 700, y: 10 } }).catch(() => {});
    await page.keyboard.press('Control+P');
    const input = page.locator('.quick-input-widget input');
    try {
        await input.waitFor({ state: 'visible', timeout: 10_000 });
        await input.fill(name);
        await page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().waitFor({ timeout: 15_000 });
        await page.keyboard.press('Enter');
    } catch (e) {
        log(`Quick Open did not work (${e.message.split('\n')[0]}); trying the Explorer`);
        await page.keyboard.press('Escape');
        await page.locator('.explorer-folders-view .monaco-list-row', { hasText: name }).first().click({ timeout: 30_000 });
    }
    await page.locator('.editor-instance .monaco-editor .view-lines').first().waitFor({ timeout: 30_000 });
    await page.locator('.tab.active', { hasText: name }).waitFor({ timeout: 30_000 });
}

async function main() {
    fs.mkdirSync(artifacts, { recursive: true });
    fs.writeFileSync(path.join(workspace, 'COMMIT_EDITMSG'), 'Fix the parser\n\nI will recieve the letter tomorrow.\n');
    const browser = await chromium.launch({
        executablePath: chromiumPath,
        headless: true,
        // Root in a container: no sandbox; no GPU.
        args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    });
    try {
        const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
        page = await context.newPage();
        page.on('pageerror', (e) => log(`page error: ${e.message}`));

        log(`opening ${url}`);
        await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 120_000 });
        await page.locator('.monaco-workbench').waitFor({ timeout: 120_000 });
        log('workbench is up');
        await openFile('notes.md');
        log('notes.md is open');

        // The model loads when the server starts (on activation for Markdown).
        const ready = await until(async () => {
            const s = await layaStatus();
            if (s && (s.text.startsWith('Laya: SmolLM2') || /no model|no server|failed|stopped/.test(s.text))) {
                return s;
            }
            return undefined;
        }, MODEL_TIMEOUT_MS, 500);
        await shot('0-ready');
        if (!ready) {
            const s = await layaStatus();
            throw new Error(
                `the status bar did not show "Laya: SmolLM2…" within ${MODEL_TIMEOUT_MS / 1000} s (it shows ${s ? JSON.stringify(s.text) : 'no Laya item: the extension did not activate'})`,
            );
        }
        if (!ready.text.startsWith('Laya: SmolLM2')) {
            throw new Error(`the server is not ready: status bar ${JSON.stringify(ready.text)}, tooltip ${JSON.stringify(ready.tooltip)}`);
        }
        log(`status bar: ${ready.text}`);

        // 1. Ghost text, accepted with Tab.
        const editor = page.locator('.editor-instance .monaco-editor .view-lines').first();
        await editor.click();
        await page.keyboard.press('Control+End');
        await page.keyboard.press('Enter');
        const prompt = 'The capital of France is ';
        let ghost;
        for (let attempt = 1; attempt <= 2 && !ghost; attempt++) {
            if (attempt === 2) {
                log('no ghost text yet: typing the sentence again');
                await page.keyboard.press('Home');
                await page.keyboard.press('Shift+End');
                await page.keyboard.press('Backspace');
            }
            await typeSlowly(prompt);
            ghost = await until(ghostText, GHOST_TIMEOUT_MS);
        }
        await shot('1-ghost-text');
        if (!ghost) {
            throw new Error(`no ghost text appeared after typing ${JSON.stringify(prompt)} (twice, ${GHOST_TIMEOUT_MS / 1000} s each)`);
        }
        log(`ghost text: ${JSON.stringify(ghost)}`);
        await page.keyboard.press('Tab');
        await page.waitForTimeout(500);
        const after1 = await saveAndRead((t) => /The capital of France is \S/.test(t));
        await shot('2-ghost-accepted');
        const line1 = lineWith(after1, 'The capital of France is') ?? '';
        if (!/Paris\W*$/.test(line1.trimEnd())) {
            throw new Error(`after Tab the line is ${JSON.stringify(line1)}, expected it to end with "Paris" (ghost text was ${JSON.stringify(ghost)})`);
        }
        log(`accepted: ${JSON.stringify(line1)}`);

        // 1b. A fast typist, with no pause inside what is typed: ghost text after a space, then
        // in the middle of a word typed in one burst; Tab accepts each.
        for (const [i, [typed, expected, whole]] of [
            ['The capital of Germany is ', 'Berlin', 'Berlin'],
            ['In winter the capital of Germany is Ber', 'lin', 'Berlin'],
        ].entries()) {
            await page.keyboard.press('Escape');
            await page.keyboard.press('Control+End');
            await page.keyboard.press('Enter');
            await typeFast(typed);
            const fast = await until(async () => {
                const g = await ghostText();
                return g && g.startsWith(expected) ? g : undefined;
            }, GHOST_TIMEOUT_MS, 100);
            await shot(`1b-fast-typist-${i + 1}-ghost-text`);
            if (!fast) {
                throw new Error(`typed at 35 ms a key, ${JSON.stringify(typed)} showed no ghost text starting ${JSON.stringify(expected)} (on screen: ${JSON.stringify(await ghostText())})`);
            }
            log(`fast typist: ${JSON.stringify(typed)} -> ghost text ${JSON.stringify(fast)}`);
            await page.keyboard.press('Tab');
            await page.waitForTimeout(300);
            const want = typed.endsWith(' ') ? typed + whole : typed.replace(/\S+$/, '') + whole;
            const saved = await saveAndRead((t) => t.includes(want));
            await shot(`1b-fast-typist-${i + 1}-accepted`);
            const line = lineWith(saved, typed.trim()) ?? lineWith(saved, want) ?? '';
            if (!saved.includes(want)) {
                throw new Error(`after Tab the line is ${JSON.stringify(line)}, expected it to hold ${JSON.stringify(want)}`);
            }
            log(`accepted: ${JSON.stringify(line)}`);
        }

        // 1c. Chinese, in a Markdown file of its own: the server routes it to the multilingual
        // model; the characters arrive as an input method commits them, and ghost text
        // completes the word the last one begins ("共" -> "共和国"); Tab accepts it.
        await page.keyboard.press('Escape');
        await openFile('zh.md');
        await page.keyboard.press('Control+End');
        // An input method commits a character or a word at a time, each after its pinyin and a
        // choice: a few hundred milliseconds apart, not a typist's 60.
        await page.keyboard.type('中华人民共', { delay: 400 });
        const zh = await until(async () => {
            const g = await ghostText();
            return g && g.startsWith('和') ? g : undefined;
        }, GHOST_TIMEOUT_MS, 100);
        await shot('1c-chinese-ghost-text');
        if (!zh) {
            throw new Error(`in zh.md, "中华人民共" showed no ghost text starting "和" (on screen: ${JSON.stringify(await ghostText())})`);
        }
        log(`Chinese: "中华人民共" -> ghost text ${JSON.stringify(zh)}`);
        await page.keyboard.press('Tab');
        await page.waitForTimeout(300);
        const zhFile = path.join(workspace, 'zh.md');
        const zhSaved = await saveAndRead((t) => t.includes('中华人民共和'), 15_000, zhFile);
        await shot('1c-chinese-accepted');
        if (!zhSaved.includes('中华人民共和')) {
            throw new Error(`after Tab zh.md holds ${JSON.stringify(zhSaved)}, expected "中华人民共和…"`);
        }
        log(`accepted: ${JSON.stringify(lineWith(zhSaved, '中华'))}`);
        await openFile('notes.md');

        // 2. A misspelling: squiggle, then the quick fix.
        await page.keyboard.press('Escape');
        await page.keyboard.press('Control+End');
        await page.keyboard.press('Enter');
        await page.keyboard.press('Enter');
        const sentence = 'I will recieve the letter tomorrow.';
        await typeSlowly(sentence);
        await page.keyboard.press('Escape'); // any ghost text after the sentence
        const squiggly = await until(async () => {
            const s = await squiggles();
            return s.length > 0 ? s : undefined;
        }, SQUIGGLE_TIMEOUT_MS);
        await shot('3-squiggle');
        if (!squiggly) {
            throw new Error(`no squiggle appeared under "recieve" within ${SQUIGGLE_TIMEOUT_MS / 1000} s`);
        }
        log(`squiggles: ${squiggly.join(', ')}`);

        // The cursor into "recieve" ("I will " is 7 characters), then Ctrl+.
        const title = 'Replace with "receive"';
        let fix;
        for (let attempt = 1; attempt <= 2 && !fix; attempt++) {
            await page.keyboard.press('Home');
            for (let i = 0; i < 9; i++) {
                await page.keyboard.press('ArrowRight');
            }
            await page.keyboard.press('Control+.');
            fix = page.locator('.action-widget .monaco-list-row, .context-view .monaco-list-row', { hasText: title }).first();
            try {
                await fix.waitFor({ state: 'visible', timeout: 20_000 });
            } catch {
                log(`no "${title}" in the quick fix menu yet`);
                await shot('4-quick-fix-menu-missing');
                await page.keyboard.press('Escape');
                fix = undefined;
            }
        }
        await shot('4-quick-fix-menu');
        if (!fix) {
            throw new Error(`Ctrl+. on "recieve" did not offer ${title}`);
        }
        // Keyboard, not a click (VS Code puts a pointer block over the editor while the menu is up):
        // move the focus to the fix, then Enter.
        const chosen = await until(async () => {
            const focused = await page.evaluate(() => {
                const row = document.querySelector('.action-widget .monaco-list-row.focused, .context-view .monaco-list-row.focused');
                return row ? row.getAttribute('aria-label') || row.textContent || '' : '';
            });
            if (focused.includes(title)) {
                return true;
            }
            await page.keyboard.press('ArrowDown');
            return false;
        }, 10_000, 150);
        if (!chosen) {
            throw new Error(`could not move the quick fix menu's focus to ${title}`);
        }
        await page.keyboard.press('Enter');
        const after2 = await saveAndRead((t) => t.includes('I will receive the letter'));
        await shot('5-quick-fix-applied');
        const line2 = lineWith(after2, 'the letter tomorrow') ?? '';
        if (!line2.includes('I will receive the letter') || after2.includes('recieve')) {
            throw new Error(`after the quick fix the line is ${JSON.stringify(line2)}, expected "I will receive the letter tomorrow."`);
        }
        log(`fixed: ${JSON.stringify(line2)}`);

        // 3. Laya: Add Word to Dictionary on a flagged word: its squiggle goes.
        await page.keyboard.press('Control+End');
        await page.keyboard.press('Enter');
        await page.keyboard.press('Enter');
        await typeSlowly('We walked to the libary after lunch.');
        await page.keyboard.press('Escape');
        const flagged = await until(async () => (await squiggles()).length > 0, SQUIGGLE_TIMEOUT_MS);
        if (!flagged) {
            await shot('6-add-word-no-squiggle');
            throw new Error(`no squiggle appeared under "libary" within ${SQUIGGLE_TIMEOUT_MS / 1000} s`);
        }
        await page.keyboard.press('Home');
        for (let i = 0; i < 19; i++) {
            await page.keyboard.press('ArrowRight');
        }
        await runCommand('Laya: Add Word to Dictionary');
        const gone = await until(async () => (await squiggles()).length === 0, 20_000);
        await shot('6-word-added');
        if (!gone) {
            throw new Error('"libary" is still underlined after Laya: Add Word to Dictionary');
        }
        log('Add Word to Dictionary: "libary" is no longer flagged');

        // 4. Laya: Toggle Ghost Text writes laya.ghostText, which goes to the server without a
        // restart (the server would say "Laya settings: ..." if it refused what was sent).
        await runCommand('Laya: Toggle Ghost Text');
        const off = await until(async () => {
            const st = await layaStatus();
            return st && st.text.includes('ghost text off') && /"laya.ghostText":\s*false/.test(fs.readFileSync(settingsFile, 'utf8')) ? st : undefined;
        }, 15_000);
        await page.waitForTimeout(1000);
        const refused = await notificationText();
        await shot('7-ghost-text-off');
        if (!off) {
            throw new Error('Laya: Toggle Ghost Text did not turn ghost text off (status bar and laya.ghostText)');
        }
        if (/Laya settings/.test(refused)) {
            throw new Error(`the server refused the settings: ${refused}`);
        }
        log(`Toggle Ghost Text: status bar ${JSON.stringify(off.text)}`);

        // 5. A Git commit message (VS Code's language git-commit, the server's gitcommit).
        await openFile('COMMIT_EDITMSG');
        const commitFlagged = await until(async () => (await squiggles()).length > 0, SQUIGGLE_TIMEOUT_MS);
        await shot('8-git-commit');
        if (!commitFlagged) {
            throw new Error('no squiggle under "recieve" in COMMIT_EDITMSG (is git-commit sent to the server as gitcommit?)');
        }
        log('COMMIT_EDITMSG (git-commit): "recieve" is flagged');

        // 6. laya.modelPath naming no file, typed in the Settings editor: the server reloads,
        // and the status bar says there is no model.
        await setInSettingsEditor('laya.modelPath', path.join(workspace, 'no-such-model.gguf'));
        const noModel = await until(async () => {
            const st = await layaStatus();
            return st && st.text === 'Laya: no model' ? st : undefined;
        }, 60_000);
        await shot('9-no-model');
        if (!noModel) {
            throw new Error(`with laya.modelPath naming no file the status bar did not say "Laya: no model" (it says ${JSON.stringify((await layaStatus())?.text)})`);
        }
        log(`laya.modelPath naming no file: status bar ${JSON.stringify(noModel.text)}, tooltip ${JSON.stringify(noModel.tooltip.slice(0, 160))}`);

        // 7. laya.path naming no file: the server restarts, and the error says what to do.
        await setInSettingsEditor('laya.path', path.join(workspace, 'no-such-laya'));
        const missing = await until(async () => {
            const n = await notificationText();
            const st = await layaStatus();
            return n.includes("Laya's server was not found") && st && st.text === 'Laya: no server' ? n : undefined;
        }, 30_000);
        await shot('10-server-not-found');
        if (!missing) {
            throw new Error(`with laya.path naming no file there was no "Laya's server was not found" error (notifications: ${JSON.stringify(await notificationText())})`);
        }
        log(`laya.path naming no file: ${JSON.stringify(missing.slice(0, 200))}`);

        const last = await layaStatus();
        log(`status bar at the end: ${last ? last.text : '(none)'}; tooltip: ${last ? JSON.stringify(last.tooltip) : ''}`);
    } catch (e) {
        if (page) {
            await shot('failure');
            try {
                const html = path.join(artifacts, 'failure.html');
                fs.writeFileSync(html, await page.content());
                log(`page HTML at the failure: ${html}`);
            } catch {}
        }
        throw e;
    } finally {
        await browser.close().catch(() => {});
    }
}

const timer = setTimeout(() => {
    console.error(`vscode test: FAILED: still running after ${TOTAL_TIMEOUT_MS / 60000} minutes`);
    process.exit(1);
}, TOTAL_TIMEOUT_MS);

main().then(
    () => {
        clearTimeout(timer);
        console.log('screenshots:');
        shots.forEach((p) => console.log(`  ${p}`));
        console.log(`vscode test: OK in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    },
    async (e) => {
        clearTimeout(timer);
        console.error(`vscode test: FAILED: ${e && e.message ? e.message : e}`);
        if (shots.length) {
            console.error('screenshots:');
            shots.forEach((p) => console.error(`  ${p}`));
        }
        process.exit(1);
    },
);
