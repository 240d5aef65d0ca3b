// Laya for VS Code: starts `laya serve`, forwards its settings, shows its ghost text through an
// InlineCompletionItemProvider (LSP 3.18 textDocument/inlineCompletion), and its model state and
// latency in the status bar. Completion, diagnostics and quick fixes come from the language
// client itself.

import * as vscode from 'vscode';
import {
    DidChangeConfigurationNotification,
    ExecuteCommandRequest,
    LanguageClient,
    LanguageClientOptions,
    RevealOutputChannelOn,
    ServerOptions,
    State,
    TransportKind,
} from 'vscode-languageclient/node';
import {
    describeStats,
    findServer,
    NOT_FOUND_MESSAGE,
    PathContext,
    serverLanguageId,
    serverSettings,
    ServerKey,
    ServerSettings,
    Stats,
    vscodeLanguages,
} from './config';

/** The server's command ids (the language client registers them as VS Code commands for the
 * code actions that use them, so the extension's own commands have other ids). */
const SERVER_ADD_WORD = 'laya.addToDictionary';
const SCHEMES = ['file', 'untitled'];
/** laya/stats every 2 s until the model is ready, then every 10 s while the window has focus
 * (the answer carries the recent latencies; the tooltip needs no more). */
const STATS_LOADING_MS = 2000;
const STATS_READY_MS = 10000;

interface LspRange {
    start: { line: number; character: number };
    end: { line: number; character: number };
}
interface LspInlineItem {
    insertText: string | { kind: 'snippet'; value: string };
    filterText?: string;
    range?: LspRange;
    command?: { title: string; command: string; arguments?: unknown[] };
}
type LspInlineResult = { items: LspInlineItem[] } | LspInlineItem[] | null;

function sleep(ms: number): Promise<void> {
    return new Promise((r) => setTimeout(r, ms));
}

function pathContext(): PathContext {
    return { workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath };
}

/** The `laya.*` settings for the server, and what was wrong with any left out; for a change
 * (`unsetAsNull`), the keys not set as null (back to the server's default). */
function readSettings(unsetAsNull = false): { settings: ServerSettings; problems: string[] } {
    const cfg = vscode.workspace.getConfiguration('laya');
    return serverSettings((key: ServerKey) => {
        const i = cfg.inspect(key);
        const set =
            i !== undefined &&
            (i.globalValue !== undefined || i.workspaceValue !== undefined || i.workspaceFolderValue !== undefined);
        return { value: cfg.get(key), set };
    }, pathContext(), unsetAsNull);
}

function ghostEnabled(): boolean {
    return vscode.workspace.getConfiguration('laya').get<boolean>('ghostText', true) !== false;
}

/** A document as the server should see it: `git-commit` becomes `gitcommit`. */
function withServerLanguage(doc: vscode.TextDocument): vscode.TextDocument {
    const id = serverLanguageId(doc.languageId);
    return id === doc.languageId ? doc : Object.create(doc, { languageId: { value: id, enumerable: true } });
}

class Laya implements vscode.Disposable {
    private client: LanguageClient | undefined;
    /** VS Code language ids the running client syncs. */
    private languages: string[] = [];
    /** Bumped on each start and stop: a poll loop or start from an older one stops. */
    private generation = 0;
    private readonly status: vscode.StatusBarItem;
    private readonly output: vscode.OutputChannel;
    private readonly perClient: vscode.Disposable[] = [];
    private lastProblems = '';
    /** Ends the poll loop's current wait early (after a settings change). */
    private wakePoll: (() => void) | undefined;

    constructor(private readonly context: vscode.ExtensionContext) {
        this.output = vscode.window.createOutputChannel('Laya');
        this.status = vscode.window.createStatusBarItem('laya.status', vscode.StatusBarAlignment.Right, 100);
        this.status.name = 'Laya';
        this.status.command = 'laya.statusMenu';
        this.setStatus('Laya: starting…', 'Laya is starting its server');
        this.status.show();
    }

    dispose(): void {
        void this.stop();
        this.status.dispose();
        this.output.dispose();
    }

    private setStatus(text: string, tooltip: string, error = false): void {
        this.status.text = text;
        this.status.tooltip = tooltip;
        this.status.backgroundColor = error ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    }

    private log(line: string): void {
        this.output.appendLine(`[${new Date().toISOString()}] ${line}`);
    }

    private reportProblems(problems: string[]): void {
        const key = problems.join('\n');
        if (key !== '' && key !== this.lastProblems) {
            void vscode.window.showWarningMessage(`Laya ignores some settings: ${problems.join('; ')}.`);
        }
        this.lastProblems = key;
    }

    async start(): Promise<void> {
        const gen = ++this.generation;
        const cfg = vscode.workspace.getConfiguration('laya');
        const found = findServer(cfg.get<string>('path', ''), pathContext(), process.env.PATH, this.context.extensionPath);
        if (found.path === undefined || found.how === 'none' || found.how === 'setting-missing') {
            const msg =
                found.how === 'setting-missing'
                    ? `laya.path is ${found.path}, which is not an executable file. ${NOT_FOUND_MESSAGE}`
                    : NOT_FOUND_MESSAGE;
            this.log(msg);
            this.setStatus('Laya: no server', msg, true);
            void vscode.window.showErrorMessage(msg, 'Open Settings', 'Retry').then((pick) => {
                if (pick === 'Open Settings') {
                    void vscode.commands.executeCommand('workbench.action.openSettings', 'laya.path');
                } else if (pick === 'Retry') {
                    void this.restart();
                }
            });
            return;
        }
        const { settings, problems } = readSettings();
        this.reportProblems(problems);
        this.languages = vscodeLanguages(settings);
        this.log(`starting ${found.path} serve (found via ${found.how}); settings ${JSON.stringify(settings)}`);

        const serverOptions: ServerOptions = {
            command: found.path,
            args: ['serve'],
            transport: TransportKind.stdio,
        };
        const clientOptions: LanguageClientOptions = {
            documentSelector: this.languages.flatMap((language) => SCHEMES.map((scheme) => ({ scheme, language }))),
            initializationOptions: settings,
            outputChannel: this.output,
            revealOutputChannelOn: RevealOutputChannelOn.Never,
            diagnosticCollectionName: 'laya',
            middleware: {
                didOpen: (doc, next) => next(withServerLanguage(doc)),
            },
            initializationFailedHandler: (error) => {
                const why = error instanceof Error ? error.message : String(error);
                this.setStatus('Laya: failed', `Laya's server did not start: ${why}`, true);
                void vscode.window.showErrorMessage(`Laya's server did not start: ${why}`);
                return false;
            },
        };
        const client = new LanguageClient('laya', 'Laya', serverOptions, clientOptions);
        this.client = client;
        this.setStatus('Laya: loading…', 'Laya is starting its server and loading the model');
        this.perClient.push(
            client.onDidChangeState((e) => {
                if (e.newState === State.Stopped && this.client === client) {
                    this.setStatus('Laya: stopped', "Laya's server stopped. Click for Laya: Restart Server.", true);
                }
            }),
        );
        try {
            await client.start();
        } catch (e) {
            const why = e instanceof Error ? e.message : String(e);
            this.log(`the server did not start: ${why}`);
            if (gen === this.generation) {
                this.setStatus('Laya: failed', `Laya's server did not start: ${why}`, true);
            }
            return;
        }
        if (gen !== this.generation) {
            return;
        }
        // The server reads the user dictionary when settings change, so say them once more.
        if (settings.userDictionary !== undefined) {
            await client.sendNotification(DidChangeConfigurationNotification.type, { settings: { laya: settings } });
        }
        this.perClient.push(
            vscode.languages.registerInlineCompletionItemProvider(
                this.languages.flatMap((language) => SCHEMES.map((scheme) => ({ scheme, language }))),
                { provideInlineCompletionItems: (d, p, c, t) => this.ghost(client, d, p, c, t) },
            ),
        );
        void this.pollStats(gen, client);
    }

    async stop(): Promise<void> {
        this.generation++;
        this.wakePoll?.();
        const client = this.client;
        this.client = undefined;
        while (this.perClient.length > 0) {
            this.perClient.pop()!.dispose();
        }
        if (client) {
            try {
                await client.stop(3000);
            } catch (e) {
                this.log(`stopping the server: ${e instanceof Error ? e.message : String(e)}`);
            }
        }
    }

    async restart(): Promise<void> {
        this.setStatus('Laya: restarting…', 'Laya is restarting its server');
        await this.stop();
        await this.start();
    }

    /** Ghost text: the server's textDocument/inlineCompletion, as VS Code inline completions. */
    private async ghost(
        client: LanguageClient,
        document: vscode.TextDocument,
        position: vscode.Position,
        context: vscode.InlineCompletionContext,
        token: vscode.CancellationToken,
    ): Promise<vscode.InlineCompletionList | undefined> {
        if (!ghostEnabled() || client.state !== State.Running) {
            return undefined;
        }
        const c2p = client.code2ProtocolConverter;
        const sel = context.selectedCompletionInfo;
        const params = {
            textDocument: c2p.asTextDocumentIdentifier(document),
            position: c2p.asPosition(position),
            context: {
                // VS Code counts from 0 (Invoke, Automatic); LSP from 1 (Invoked, Automatic).
                triggerKind: context.triggerKind === vscode.InlineCompletionTriggerKind.Invoke ? 1 : 2,
                ...(sel ? { selectedCompletionInfo: { range: c2p.asRange(sel.range), text: sel.text } } : {}),
            },
        };
        let result: LspInlineResult;
        try {
            result = await client.sendRequest<LspInlineResult>('textDocument/inlineCompletion', params, token);
        } catch (e) {
            // Superseded by a newer edit, cancelled, or the model not ready: no ghost text.
            const code = (e as { code?: number }).code;
            if (!token.isCancellationRequested && code !== -32800 && code !== -32803) {
                this.log(`inlineCompletion: ${e instanceof Error ? e.message : String(e)}`);
            }
            return undefined;
        }
        if (!result || token.isCancellationRequested) {
            return undefined;
        }
        const p2c = client.protocol2CodeConverter;
        const items = (Array.isArray(result) ? result : result.items).map((i) => {
            const text = typeof i.insertText === 'string' ? i.insertText : new vscode.SnippetString(i.insertText.value);
            // No range is an insertion at the cursor (LSP); VS Code would take the word at the
            // cursor to the end of the line, and drop "lin" after "Ber" for not starting with it.
            const item = new vscode.InlineCompletionItem(text, i.range ? p2c.asRange(i.range) : new vscode.Range(position, position));
            if (i.filterText !== undefined) {
                item.filterText = i.filterText;
            }
            if (i.command) {
                item.command = { title: i.command.title, command: i.command.command, arguments: i.command.arguments };
            }
            return item;
        });
        return new vscode.InlineCompletionList(items);
    }

    /** Asks laya/stats every 2 s while the model loads (the first answer waits for it), then
     * every 10 s while the window has focus. */
    private async pollStats(gen: number, client: LanguageClient): Promise<void> {
        let ready = false;
        while (gen === this.generation) {
            if (client.state === State.Running && (!ready || vscode.window.state.focused)) {
                try {
                    const s = await client.sendRequest<Stats>('laya/stats');
                    if (gen !== this.generation) {
                        return;
                    }
                    const d = describeStats(s, ghostEnabled());
                    ready = s.model_state === 'ready';
                    this.setStatus(d.text, d.tooltip + '\nClick for Laya\'s commands.', d.failed);
                } catch (e) {
                    if (gen === this.generation && client.state === State.Running) {
                        this.log(`laya/stats: ${e instanceof Error ? e.message : String(e)}`);
                    }
                }
            }
            await new Promise<void>((resolve) => {
                const t = setTimeout(resolve, ready ? STATS_READY_MS : STATS_LOADING_MS);
                this.wakePoll = () => {
                    clearTimeout(t);
                    resolve();
                };
            });
            this.wakePoll = undefined;
        }
    }

    /** Settings changed: laya.path restarts the server; the rest goes to it as they are. */
    async configurationChanged(e: vscode.ConfigurationChangeEvent): Promise<void> {
        if (e.affectsConfiguration('laya.path')) {
            this.log('laya.path changed: restarting');
            await this.restart();
            return;
        }
        if (!e.affectsConfiguration('laya') || e.affectsConfiguration('laya.trace')) {
            return;
        }
        const { settings, problems } = readSettings(true);
        this.reportProblems(problems);
        const client = this.client;
        if (!client || client.state !== State.Running) {
            return;
        }
        if (!vscodeLanguages(settings).every((l) => this.languages.includes(l))) {
            this.log('laya.languages has a language the server does not sync yet: restarting');
            await this.restart();
            return;
        }
        this.log(`settings changed: ${JSON.stringify(settings)}`);
        await client.sendNotification(DidChangeConfigurationNotification.type, { settings: { laya: settings } });
        // A new model or lexicon path reloads them: say so now; the next answer says how it went.
        if (e.affectsConfiguration('laya.modelPath') || e.affectsConfiguration('laya.multilingualModelPath') || e.affectsConfiguration('laya.lexiconPath')) {
            this.setStatus('Laya: loading…', 'Laya is loading its model');
        }
        this.wakePoll?.();
        if (e.affectsConfiguration('laya.ghostText') && !ghostEnabled()) {
            void vscode.commands.executeCommand('editor.action.inlineSuggest.hide');
        }
    }

    async toggleGhostText(): Promise<void> {
        const cfg = vscode.workspace.getConfiguration('laya');
        const i = cfg.inspect<boolean>('ghostText');
        const target =
            i?.workspaceFolderValue !== undefined
                ? vscode.ConfigurationTarget.WorkspaceFolder
                : i?.workspaceValue !== undefined
                  ? vscode.ConfigurationTarget.Workspace
                  : vscode.ConfigurationTarget.Global;
        const on = !ghostEnabled();
        await cfg.update('ghostText', on, target);
        vscode.window.setStatusBarMessage(`Laya: ghost text ${on ? 'on' : 'off'}`, 3000);
    }

    async addWordToDictionary(): Promise<void> {
        const editor = vscode.window.activeTextEditor;
        if (!editor) {
            void vscode.window.showInformationMessage('Laya: put the cursor on a word to add it to the dictionary.');
            return;
        }
        const doc = editor.document;
        const range = editor.selection.isEmpty
            ? doc.getWordRangeAtPosition(editor.selection.active, /[\p{L}\p{M}\p{N}'’_-]+/u)
            : editor.selection;
        const word = range ? doc.getText(range).trim().replace(/^['’-]+|['’-]+$/g, '') : '';
        if (word === '' || /\s/.test(word) || Buffer.byteLength(word) > 100) {
            void vscode.window.showInformationMessage('Laya: put the cursor on one word (or select it) to add it to the dictionary.');
            return;
        }
        const client = this.client;
        if (!client || client.state !== State.Running) {
            void vscode.window.showErrorMessage("Laya's server is not running (Laya: Restart Server).");
            return;
        }
        try {
            await client.sendRequest(ExecuteCommandRequest.type, { command: SERVER_ADD_WORD, arguments: [word] });
        } catch (e) {
            void vscode.window.showErrorMessage(`Laya could not add "${word}": ${e instanceof Error ? e.message : String(e)}`);
            return;
        }
        const dict = readSettings().settings.userDictionary;
        vscode.window.setStatusBarMessage(
            `Laya: added "${word}" to ${dict || '~/.config/laya/dictionary.txt'}`,
            5000,
        );
    }

    async statusMenu(): Promise<void> {
        const items: (vscode.QuickPickItem & { command: string })[] = [
            { label: 'Laya: Restart Server', command: 'laya.restartServer' },
            { label: `Laya: Turn Ghost Text ${ghostEnabled() ? 'Off' : 'On'}`, command: 'laya.toggleGhostText' },
            { label: 'Laya: Show Output', command: 'laya.showOutput' },
            { label: 'Laya: Settings', command: 'laya.openSettings' },
        ];
        const pick = await vscode.window.showQuickPick(items, { placeHolder: this.status.tooltip?.toString().split('\n')[0] });
        if (pick) {
            await vscode.commands.executeCommand(pick.command);
        }
    }

    showOutput(): void {
        this.output.show(true);
    }
}

let laya: Laya | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    const l = new Laya(context);
    laya = l;
    context.subscriptions.push(
        l,
        vscode.commands.registerCommand('laya.restartServer', () => l.restart()),
        vscode.commands.registerCommand('laya.toggleGhostText', () => l.toggleGhostText()),
        vscode.commands.registerCommand('laya.addWordToDictionary', () => l.addWordToDictionary()),
        vscode.commands.registerCommand('laya.showOutput', () => l.showOutput()),
        vscode.commands.registerCommand('laya.statusMenu', () => l.statusMenu()),
        vscode.commands.registerCommand('laya.openSettings', () =>
            vscode.commands.executeCommand('workbench.action.openSettings', '@ext:laya-dev.laya'),
        ),
        vscode.workspace.onDidChangeConfiguration((e) => l.configurationChanged(e)),
    );
    await l.start();
}

export async function deactivate(): Promise<void> {
    if (laya) {
        await laya.stop();
        laya = undefined;
    }
}
