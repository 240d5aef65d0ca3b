-- Headless Neovim (0.7 or newer) with its built-in LSP client against `laya serve`: a diagnostic,
-- a completion, and its omnifunc's completion (sent with no context) in a Markdown buffer. Run by tests/lsp.rs; writes what it saw, as JSON, to
-- $LAYA_EDITOR_OUT and quits.
local out = assert(os.getenv("LAYA_EDITOR_OUT"))
local result = {}

local function finish()
  local f = assert(io.open(out, "w"))
  f:write(vim.fn.json_encode(result))
  f:close()
  vim.cmd("qall!")
end

local ok, err = pcall(function()
  vim.cmd("edit " .. vim.fn.fnameescape(assert(os.getenv("LAYA_EDITOR_FILE"))))
  vim.bo.filetype = "markdown"
  local id = vim.lsp.start_client({
    name = "laya",
    cmd = { assert(os.getenv("LAYA_BIN")), "serve" },
    root_dir = vim.fn.getcwd(),
    init_options = { debounceMs = 50 },
  })
  assert(id, "the client did not start")
  vim.lsp.buf_attach_client(0, id)
  result.attached = vim.wait(30000, function()
    local c = vim.lsp.get_client_by_id(id)
    return c ~= nil and c.initialized == true
  end, 50)
  result.got_diagnostics = vim.wait(60000, function() return #vim.diagnostic.get(0) > 0 end, 50)
  result.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(0)) do
    table.insert(result.diagnostics, { lnum = d.lnum, col = d.col, end_col = d.end_col, message = d.message })
  end
  -- Completion at the end of line 3, "The capital of France is Pa".
  local line = vim.api.nvim_buf_get_lines(0, 2, 3, false)[1]
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(0) },
    position = { line = 2, character = #line },
    context = { triggerKind = 1 },
  }
  local responses = vim.lsp.buf_request_sync(0, "textDocument/completion", params, 30000) or {}
  result.completions = {}
  for _, r in pairs(responses) do
    local items = r.result and (r.result.items or r.result) or {}
    for _, item in ipairs(items) do
      table.insert(result.completions, item.label)
    end
  end
end)
result.ok = ok
result.error = ok and nil or tostring(err)
if not ok then
  finish()
  return
end

-- Neovim 0.7-0.10's own omnifunc, <C-x><C-o> in Insert mode after a space: its request has no
-- `context` at all. The user asked, so the next words come back.
local ok2, err2 = pcall(function()
  vim.bo.omnifunc = "v:lua.vim.lsp.omnifunc"
  vim.api.nvim_buf_set_lines(0, 2, 3, false, { "The capital of France is " })
  vim.api.nvim_win_set_cursor(0, { 3, 0 })
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("A<C-x><C-o>", true, false, true), "n", false)
end)
if not ok2 then
  result.ok = false
  result.error = tostring(err2)
  finish()
  return
end
local started = vim.loop.now()
local timer = vim.loop.new_timer()
timer:start(100, 100, vim.schedule_wrap(function()
  local items = vim.fn.complete_info({ "items" }).items or {}
  if #items > 0 or vim.loop.now() - started > 30000 then
    timer:stop()
    result.omnifunc = {}
    for _, item in ipairs(items) do
      table.insert(result.omnifunc, item.word)
    end
    finish()
  end
end))
