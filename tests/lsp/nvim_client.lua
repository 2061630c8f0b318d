-- A real LSP client reads denpex's diagnostics: Neovim's built-in one
-- (0.7+, Debian's neovim), headless. tests/lsp/nvim_test.sh runs it with
--   DENPEX_BIN  the binary   DENPEX_LOG  the log to open   DENPEX_OUT  where to write
-- and compares what it writes. One line per diagnostic: line, severity,
-- entry id, message; then the first line of the hover on the error.
local bin, log, out = os.getenv('DENPEX_BIN'), os.getenv('DENPEX_LOG'), os.getenv('DENPEX_OUT')
vim.cmd('edit ' .. vim.fn.fnameescape(log))
local buf = vim.api.nvim_get_current_buf()
local id = vim.lsp.start_client({ name = 'denpex', cmd = { bin, 'lsp', '--no-config' }, root_dir = vim.fn.getcwd() })
vim.lsp.buf_attach_client(buf, id)
local lines = {}
if not vim.wait(20000, function() return #vim.diagnostic.get(buf) > 0 end, 50) then
  table.insert(lines, 'no diagnostics within 20 s')
end
local diags = vim.diagnostic.get(buf)
table.sort(diags, function(a, b) return a.lnum < b.lnum or (a.lnum == b.lnum and a.severity < b.severity) end)
local error_line
for _, d in ipairs(diags) do
  local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code) or ''
  table.insert(lines, string.format('%d\t%d\t%s\t%s', d.lnum + 1, d.severity, code, d.message))
  if d.severity == vim.diagnostic.severity.ERROR then
    error_line = d.lnum
  end
end
if error_line then
  local params = { textDocument = { uri = vim.uri_from_bufnr(buf) }, position = { line = error_line, character = 0 } }
  local replies = vim.lsp.buf_request_sync(buf, 'textDocument/hover', params, 10000) or {}
  for _, r in pairs(replies) do
    if r.result and r.result.contents then
      local value = r.result.contents.value or ''
      table.insert(lines, 'hover: ' .. (vim.split(value, '\n')[1] or ''))
    end
  end
end
vim.fn.writefile(lines, out)
vim.lsp.stop_client(id)
vim.cmd('qa!')
