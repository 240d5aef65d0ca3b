// The parts of the extension that need no VS Code: which settings go to the server and how,
// language ids, finding the binary, and what the status bar says. Unit-tested in test/.

import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import manifest from '../package.json';

/** The keys `laya serve` accepts; it rejects any other key, so only these are ever sent. */
export const SERVER_KEYS = [
    'ghostText',
    'completion',
    'diagnostics',
    'languages',
    'modelPath',
    'multilingualModelPath',
    'lexiconPath',
    'userDictionary',
    'memoryBudgetMb',
    'threshold',
    'diagnosticSeverity',
    'debounceMs',
    'latencyBudgetMs',
    'workAhead',
    'recall',
] as const;
export type ServerKey = (typeof SERVER_KEYS)[number];
export type ServerSettings = Partial<Record<ServerKey, boolean | number | string | string[] | null>>;

const BOOLEANS: ServerKey[] = ['ghostText', 'completion', 'diagnostics', 'workAhead', 'recall'];
const PATHS: ServerKey[] = ['modelPath', 'multilingualModelPath', 'lexiconPath', 'userDictionary'];

/** A setting as package.json declares it. */
interface Declared {
    type?: string;
    minimum?: number;
    maximum?: number;
    enum?: string[];
}
const DECLARED = manifest.contributes.configuration.properties as Record<string, Declared>;

/** Numbers and the ranges the server allows (it refuses to start on a value outside them), as
 * package.json declares them; the server's tests check those are its own (settings.rs). */
const NUMBERS: Partial<Record<ServerKey, [number, number, boolean]>> = Object.fromEntries(
    SERVER_KEYS.flatMap((key) => {
        const d = DECLARED[`laya.${key}`];
        if (d?.type !== 'number' && d?.type !== 'integer') {
            return [];
        }
        return [[key, [d.minimum ?? -Infinity, d.maximum ?? Infinity, d.type === 'integer']]];
    }),
);
const SEVERITIES = DECLARED['laya.diagnosticSeverity'].enum ?? [];

/** The languages the server works in when `laya.languages` is not set (its own default). */
export const DEFAULT_LANGUAGES = ['markdown', 'plaintext', 'gitcommit', 'latex', 'restructuredtext'];

/** VS Code language ids that the server knows by another name. */
const TO_SERVER: Record<string, string> = { 'git-commit': 'gitcommit', 'git-rebase': 'gitrebase' };
const TO_VSCODE: Record<string, string> = Object.fromEntries(Object.entries(TO_SERVER).map(([a, b]) => [b, a]));

/** The id the server uses for a VS Code language id (`git-commit` is `gitcommit` there). */
export function serverLanguageId(vscodeId: string): string {
    return TO_SERVER[vscodeId] ?? vscodeId;
}

/** The VS Code language id for one of the server's. */
export function vscodeLanguageId(serverId: string): string {
    return TO_VSCODE[serverId] ?? serverId;
}

export interface PathContext {
    /** The first workspace folder, if any: `${workspaceFolder}` and relative paths use it. */
    workspaceFolder?: string;
    home?: string;
}

/** Expands `~` and `${workspaceFolder}`; a path still relative is taken from the workspace
 * folder. Returns undefined when no absolute path can be made. */
export function resolvePath(p: string, ctx: PathContext): string | undefined {
    const home = ctx.home ?? os.homedir();
    let out = p.trim();
    if (out === '~' || out.startsWith('~/') || out.startsWith('~\\')) {
        out = path.join(home, out.slice(1));
    }
    if (out.includes('${workspaceFolder}')) {
        if (!ctx.workspaceFolder) {
            return undefined;
        }
        out = out.split('${workspaceFolder}').join(ctx.workspaceFolder);
    }
    if (!path.isAbsolute(out)) {
        if (!ctx.workspaceFolder) {
            return undefined;
        }
        out = path.join(ctx.workspaceFolder, out);
    }
    return path.normalize(out);
}

/** What one `laya.*` setting holds: its value and whether the user set it anywhere. */
export interface SettingValue {
    value: unknown;
    set: boolean;
}

/** The settings to send to the server (initializationOptions and didChangeConfiguration):
 * only keys the user set, with non-empty and valid values. Anything invalid is left out (the
 * server would refuse all of them) and said in `problems`. With `unsetAsNull` (a change), a key
 * the user does not set is sent as null, which puts it back to the server's default: the server
 * merges a change into what it has, so a setting removed in VS Code must be said. */
export function serverSettings(
    read: (key: ServerKey) => SettingValue,
    ctx: PathContext,
    unsetAsNull = false,
): { settings: ServerSettings; problems: string[] } {
    const settings: ServerSettings = {};
    const problems: string[] = [];
    for (const key of SERVER_KEYS) {
        const { value, set } = read(key);
        if (!set || value === undefined || value === null || value === '') {
            if (unsetAsNull) {
                settings[key] = null;
            }
            continue;
        }
        if (BOOLEANS.includes(key)) {
            if (typeof value === 'boolean') {
                settings[key] = value;
            } else {
                problems.push(`laya.${key} must be true or false`);
            }
        } else if (PATHS.includes(key)) {
            if (typeof value !== 'string') {
                problems.push(`laya.${key} must be a path`);
                continue;
            }
            const abs = resolvePath(value, ctx);
            if (abs === undefined) {
                problems.push(`laya.${key} (${value}) is relative and there is no workspace folder to take it from`);
            } else {
                settings[key] = abs;
            }
        } else if (key in NUMBERS) {
            const [lo, hi, integer] = NUMBERS[key]!;
            if (typeof value !== 'number' || !Number.isFinite(value) || value < lo || value > hi) {
                problems.push(`laya.${key} must be a number from ${lo} to ${hi}, not ${JSON.stringify(value)}`);
            } else {
                settings[key] = integer ? Math.round(value) : value;
            }
        } else if (key === 'languages') {
            if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
                problems.push('laya.languages must be a list of language ids');
                continue;
            }
            const ids = [...new Set(value.map((v: string) => serverLanguageId(v.trim())).filter((v) => v !== ''))];
            if (ids.length > 0) {
                settings[key] = ids;
            }
        } else if (key === 'diagnosticSeverity') {
            if (typeof value === 'string' && SEVERITIES.includes(value)) {
                settings[key] = value;
            } else {
                problems.push(`laya.diagnosticSeverity must be one of ${SEVERITIES.join(', ')}`);
            }
        }
    }
    return { settings, problems };
}

/** The VS Code language ids to sync with the server for these settings. */
export function vscodeLanguages(settings: ServerSettings): string[] {
    const langs = (settings.languages as string[] | undefined) ?? DEFAULT_LANGUAGES;
    return [...new Set(langs.map(vscodeLanguageId))];
}

export interface Found {
    path?: string;
    /** Where it came from, or why nothing was found. */
    how: 'setting' | 'PATH' | 'bundled' | 'setting-missing' | 'none';
}

function isExecutable(p: string): boolean {
    try {
        const st = fs.statSync(p);
        if (!st.isFile()) {
            return false;
        }
        if (process.platform === 'win32') {
            return true;
        }
        fs.accessSync(p, fs.constants.X_OK);
        return true;
    } catch {
        return false;
    }
}

/** Looks for `name` in the folders of a PATH string (with Windows' executable suffixes). */
export function findOnPath(name: string, pathVar: string | undefined, exists: (p: string) => boolean = isExecutable): string | undefined {
    const exts = process.platform === 'win32' ? ['.exe', '.cmd', ''] : [''];
    for (const dir of (pathVar ?? '').split(path.delimiter)) {
        if (!dir) {
            continue;
        }
        for (const ext of exts) {
            const p = path.join(dir, name + ext);
            if (exists(p)) {
                return p;
            }
        }
    }
    return undefined;
}

/** The server binary: `laya.path`, then `laya` on PATH, then `bin/laya` in the extension. A
 * `laya.path` that names no file is reported rather than silently passed over. */
export function findServer(
    setting: string,
    ctx: PathContext,
    pathVar: string | undefined,
    extensionDir: string,
    exists: (p: string) => boolean = isExecutable,
): Found {
    if (setting.trim() !== '') {
        const p = resolvePath(setting, ctx);
        return p !== undefined && exists(p) ? { path: p, how: 'setting' } : { path: p ?? setting, how: 'setting-missing' };
    }
    const onPath = findOnPath('laya', pathVar, exists);
    if (onPath) {
        return { path: onPath, how: 'PATH' };
    }
    const bundled = path.join(extensionDir, 'bin', process.platform === 'win32' ? 'laya.exe' : 'laya');
    if (exists(bundled)) {
        return { path: bundled, how: 'bundled' };
    }
    return { how: 'none' };
}

export const NOT_FOUND_MESSAGE =
    "Laya's server was not found. Build it with `make build` in the Laya repository and set laya.path to target/release/laya (or put it on PATH)";

/** The median of the last `n` values (undefined for none). */
export function median(values: number[] | undefined, n = 100): number | undefined {
    if (!values || values.length === 0) {
        return undefined;
    }
    const xs = values.slice(-n).slice().sort((a, b) => a - b);
    const mid = Math.floor(xs.length / 2);
    return xs.length % 2 === 1 ? xs[mid] : (xs[mid - 1] + xs[mid]) / 2;
}

/** What `laya/stats` answers (the parts the status bar uses). */
export interface Stats {
    model_state?: string;
    documents_open?: number;
    reanchors?: number;
    engine?: {
        model?: string | null;
        ghost_ms?: number[];
        check_ms?: number[];
        cache_bytes?: number;
        budget_bytes?: number;
    };
}

/** A model file's name as the status bar shows it: no folders, no `.gguf`. */
export function modelName(model: string | null | undefined): string {
    if (!model) {
        return 'model';
    }
    const base = model.split(/[\\/]/).filter((s) => s !== '').pop() ?? model;
    return base.replace(/\.gguf$/i, '');
}

function ms(x: number): string {
    return x < 10 ? x.toFixed(1) : x.toFixed(0);
}

/** Status bar text and tooltip for a `laya/stats` answer. */
export function describeStats(s: Stats, ghostEnabled: boolean): { text: string; tooltip: string; failed: boolean } {
    const state = s.model_state ?? 'loading';
    if (state === 'loading') {
        return { text: 'Laya: loading…', tooltip: 'Laya is loading its model', failed: false };
    }
    if (state.startsWith('failed')) {
        const why = state.replace(/^failed:\s*/, '');
        return {
            text: 'Laya: no model',
            tooltip: `Laya could not load its model: ${why}\nGhost text and completion are off; spelling works if the lexicon loaded.`,
            failed: true,
        };
    }
    const name = modelName(s.engine?.model);
    const m = median(s.engine?.ghost_ms);
    const lines = [`Laya is ready: ${s.engine?.model ?? name}`];
    lines.push(
        m === undefined
            ? 'Ghost text: no suggestions timed yet'
            : `Ghost text: median ${ms(m)} ms over the last ${Math.min(100, s.engine!.ghost_ms!.length)}`,
    );
    const c = median(s.engine?.check_ms);
    if (c !== undefined) {
        lines.push(`Spelling checks: median ${ms(c)} ms`);
    }
    if (s.engine?.cache_bytes !== undefined) {
        lines.push(`Cache: ${(s.engine.cache_bytes / 1048576).toFixed(1)} MB; documents open: ${s.documents_open ?? 0}`);
    }
    if (!ghostEnabled) {
        lines.push('Ghost text is off (Laya: Toggle Ghost Text)');
    }
    const text = `Laya: ${name}` + (ghostEnabled ? (m === undefined ? '' : ` · ${ms(m)} ms`) : ' (ghost text off)');
    return { text, tooltip: lines.join('\n'), failed: false };
}
