-- Headless Neovim (0.7 or newer) with its built-in LSP client against `laya serve`: a diagnostic
-- and a completion in a Markdown buffer. Run by tests/lsp.rs; writes what it saw, as JSON, to
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
finish()
