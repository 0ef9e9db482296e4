-- fastapply.nvim: rewrite the current buffer from a lazy edit snippet through `fastapply-lsp`.
--
--   require("fastapply").setup({ cmd = { "/path/to/.venv/bin/fastapply-lsp" } })
--
--   :FastApply            apply the `+` register (config.register) to the current buffer
--   :FastApply a          apply register a
--   :'<,'>FastApply       apply the selected lines (of a scratch buffer or a second window) to the
--                         target buffer (the scratch buffer's target, else the previous window's buffer)
--   :FastApplyScratch     open a scratch buffer for a snippet; :FastApply in it applies it to the file
--   :FastApplyPreview [r] show the diff the apply would make, in a split; edits nothing
--
-- The server sends minimal text edits (workspace/applyEdit), so cursor, marks, extmarks, folds and
-- undo history survive; a failed apply changes nothing and says why. Neovim >= 0.10.
--
-- A refused apply that offers readings (the snippet fits the file in several ways) becomes a choice:
-- `vim.ui.select` over the readings, their diffs in a preview window; the chosen one is applied by
-- the server (fastapply.applyReading), which refuses if the buffer changed meanwhile.

local M = {}

M.config = {
  cmd = { "fastapply-lsp" }, -- the server command (add "--engine", "structural" or "--server", "host:port")
  name = "fastapply",
  engine = nil, -- per-command engine ("auto", "speculative", "plain", "structural"); nil: the server's default (auto)
  register = "+", -- the register :FastApply reads without an argument
  auto_attach = true, -- attach the server to every normal file buffer
  progress = true, -- echo the server's $/progress messages
  close_scratch = true, -- close the scratch buffer after a successful apply
  timeout_ms = 15000, -- how long to wait for the server to start
  notify = function(msg, level)
    vim.notify(msg, level)
  end,
}

M.reading_preview = nil -- { win, buf } of the readings' diff preview while a choice is open
M.last = nil -- the summary of the last successful apply (edits, changedLines, tokensPerSecond, engine, ...)
M.last_error = nil -- the message of the last failed apply
M.pending = 0 -- applies in flight

local has_011 = vim.fn.has("nvim-0.11") == 1

local function request(client, method, params, handler, bufnr)
  if has_011 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

local function notify(msg, level)
  M.config.notify(msg, level or vim.log.levels.INFO)
end

local function is_file_buffer(bufnr)
  return vim.api.nvim_buf_is_valid(bufnr) and vim.bo[bufnr].buftype == "" and vim.api.nvim_buf_get_name(bufnr) ~= ""
end

--- Start (or reuse: one server per Neovim) the language server and attach it to `bufnr`.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if not is_file_buffer(bufnr) then
    return nil
  end
  local root = (vim.fs.root and vim.fs.root(bufnr, { ".git" })) or vim.fn.getcwd()
  return vim.lsp.start({
    name = M.config.name,
    cmd = M.config.cmd,
    root_dir = root,
    handlers = {
      -- Neovim prints a workspace edit's label; an apply already says what it did.
      ["workspace/applyEdit"] = function(err, result, ctx)
        if type(result) == "table" then
          result.label = nil
        end
        return vim.lsp.handlers["workspace/applyEdit"](err, result, ctx)
      end,
      -- Command errors are shown by the command's handler; skip the server's copy of them.
      ["window/showMessage"] = function(err, result, ctx)
        if result and type(result.message) == "string" and result.message:find("^Fast Apply:") then
          return vim.NIL
        end
        return vim.lsp.handlers["window/showMessage"](err, result, ctx)
      end,
    },
  }, {
    bufnr = bufnr,
    reuse_client = function(client, config)
      return client.name == config.name
    end,
  })
end

--- The initialized client attached to `bufnr` (started when needed), or nil and a message.
local function client_for(bufnr)
  if not is_file_buffer(bufnr) then
    return nil, "the target is not a file buffer"
  end
  local ok_start, id = pcall(M.attach, bufnr)
  if not ok_start or not id then
    return nil, "could not start the fastapply language server (cmd: " .. table.concat(M.config.cmd, " ") .. ")"
  end
  local client
  local ok = vim.wait(M.config.timeout_ms, function()
    client = vim.lsp.get_client_by_id(id)
    return client ~= nil and client.initialized and vim.lsp.buf_is_attached(bufnr, id)
  end, 20)
  if not ok or not client then
    return nil, "the fastapply language server did not start (cmd: " .. table.concat(M.config.cmd, " ") .. ")"
  end
  return client
end

local function buffer_text(bufnr, first, last)
  local lines = vim.api.nvim_buf_get_lines(bufnr, first or 0, last or -1, false)
  return table.concat(lines, "\n") .. "\n"
end

--- Find the update text and the target buffer for a command invocation.
--- opts: { args = "a" | "", range = 0|1|2, line1, line2 }
local function resolve(opts)
  local cur = vim.api.nvim_get_current_buf()
  local target = vim.b[cur].fastapply_target
  local update
  if opts.range and opts.range > 0 then
    update = buffer_text(cur, opts.line1 - 1, opts.line2)
    if not target then
      local prev = vim.fn.winnr("#")
      local prev_buf = prev > 0 and vim.fn.winbufnr(prev) or -1
      if prev_buf > 0 and prev_buf ~= cur and is_file_buffer(prev_buf) then
        target = prev_buf
      else
        return nil, nil, "select the snippet in a scratch buffer (:FastApplyScratch) or in a second window"
      end
    end
  elseif target then
    if opts.args ~= nil and opts.args ~= "" then
      update = vim.fn.getreg(opts.args)
    else
      update = buffer_text(cur)
    end
  else
    local reg = (opts.args ~= nil and opts.args ~= "") and opts.args or M.config.register
    update = vim.fn.getreg(reg)
    target = cur
    if update == nil or update:match("^%s*$") then
      return nil, nil, "register " .. reg .. " is empty"
    end
  end
  if not vim.api.nvim_buf_is_valid(target) then
    return nil, nil, "the target buffer is gone"
  end
  return update, target
end

local function arguments(bufnr, update, instruction)
  local arg = { uri = vim.uri_from_bufnr(bufnr), update = update }
  if M.config.engine then
    arg.engine = M.config.engine
  end
  if instruction and instruction ~= "" then
    arg.instruction = instruction
  end
  return { arg }
end

-- -- a refusal's readings: a choice ------------------------------------------------------------

local function text_of(reading)
  return type(reading.text) == "string" and reading.text or nil -- JSON null (vim.NIL): left out for size
end

--- The first line (1-based) where `text` differs from `base`, and that line (trimmed).
local function first_difference(base, text)
  local a = vim.split(base, "\n", { plain = true })
  local b = vim.split(text, "\n", { plain = true })
  local i = 1
  while i <= #a and i <= #b and a[i] == b[i] do
    i = i + 1
  end
  return i, vim.trim(b[i] or "")
end

--- The first changed line of a unified diff (past its headers), for readings sent without their text.
local function first_diff_line(diff)
  for _, line in ipairs(vim.split(diff, "\n", { plain = true })) do
    if line:match("^[+-]") and not line:match("^%+%+%+ ") and not line:match("^%-%-%- ") then
      return line
    end
  end
  return ""
end

--- A label per reading: its `how` and where it first differs (from the buffer for the first
--- reading, from the first reading for the others), so that the choices tell the readings apart.
local function reading_labels(bufnr, readings)
  local labels = {}
  local best = text_of(readings[1])
  for i, r in ipairs(readings) do
    local text, where = text_of(r), nil
    if text and i == 1 then
      local line, what = first_difference(buffer_text(bufnr), text)
      where = string.format("line %d: %s", line, what)
    elseif text and best then
      local line, what = first_difference(best, text)
      where = string.format("vs 1, line %d: %s", line, what)
    else
      where = first_diff_line(r.diff)
    end
    labels[i] = string.format("%d. %s — %s", r.index, r.how, where)
  end
  return labels
end

--- A scratch window below holding every reading's diff against the buffer (`filetype=diff`).
local function open_reading_preview(bufnr, readings)
  local back = vim.api.nvim_get_current_win()
  vim.cmd("botright new")
  local win, buf = vim.api.nvim_get_current_win(), vim.api.nvim_get_current_buf()
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  local lines = {}
  for _, r in ipairs(readings) do
    table.insert(lines, string.format("# reading %d: %s", r.index, r.how))
    vim.list_extend(lines, vim.split((r.diff:gsub("\n$", "")), "\n", { plain = true }))
  end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = "diff"
  pcall(vim.api.nvim_buf_set_name, buf, "fastapply://readings/" .. vim.fn.fnamemodify(
    vim.api.nvim_buf_get_name(bufnr), ":t") .. "#" .. buf)
  vim.api.nvim_set_current_win(back)
  return { win = win, buf = buf }
end

local function close_reading_preview()
  local p = M.reading_preview
  M.reading_preview = nil
  if p and vim.api.nvim_win_is_valid(p.win) then
    vim.api.nvim_win_close(p.win, true)
  end
end

--- Offer the readings of a refusal (`data`: the error's data) with `vim.ui.select`; apply the chosen
--- one through the server. `on_done(err, summary)` when it ends; cancel applies nothing.
function M.choose_reading(bufnr, client, data, on_done)
  local readings = data.readings
  M.pending = M.pending + 1
  local function finish(err, result)
    M.pending = M.pending - 1
    if on_done then
      on_done(err, result)
    end
  end
  close_reading_preview()
  M.reading_preview = open_reading_preview(bufnr, readings)
  local choices = {}
  for i, label in ipairs(reading_labels(bufnr, readings)) do
    choices[i] = { index = readings[i].index, label = label, text = text_of(readings[i]) }
  end
  vim.ui.select(choices, {
    prompt = (data.hint or "") .. " Pick a reading to apply:",
    kind = "fastapply.reading",
    format_item = function(choice)
      return choice.label
    end,
  }, function(choice)
    close_reading_preview()
    if not choice then
      notify("Fast Apply: no reading chosen; nothing changed", vim.log.levels.INFO)
      return finish("no reading chosen")
    end
    -- the text (where sent) lets the server check that it is this refusal's reading
    local arg = { uri = data.uri, version = data.version, reading = choice.index, text = choice.text }
    request(client, "workspace/executeCommand", { command = "fastapply.applyReading", arguments = { arg } },
      function(err, result)
        if err then
          M.last_error = err.message or tostring(err)
          notify("Fast Apply: " .. M.last_error, vim.log.levels.ERROR)
          return finish(M.last_error)
        end
        M.last, M.last_error = result, nil
        notify(result.message or "Fast Apply: done", vim.log.levels.INFO)
        finish(nil, result)
      end, bufnr)
  end)
end

local function offers_readings(err)
  local data = type(err) == "table" and err.data or nil
  return type(data) == "table" and type(data.readings) == "table" and #data.readings > 0 and data.uri ~= nil
end

--- Apply `update` to buffer `bufnr`; `on_done(err, summary)` is called when it ends.
function M.apply_text(bufnr, update, on_done, instruction)
  local client, msg = client_for(bufnr)
  if not client then
    M.last_error = msg
    notify("Fast Apply: " .. msg, vim.log.levels.ERROR)
    if on_done then
      on_done(msg)
    end
    return
  end
  M.pending = M.pending + 1
  request(client, "workspace/executeCommand", {
    command = "fastapply.applyEdit",
    arguments = arguments(bufnr, update, instruction),
  }, function(err, result)
    M.pending = M.pending - 1
    if err then
      M.last_error = err.message or tostring(err)
      notify("Fast Apply failed: " .. M.last_error, vim.log.levels.ERROR)
      if offers_readings(err) and vim.api.nvim_buf_is_valid(bufnr) then
        return M.choose_reading(bufnr, client, err.data, on_done)
      end
    else
      M.last, M.last_error = result, nil
      notify(result.message or "Fast Apply: done", vim.log.levels.INFO)
    end
    if on_done then
      on_done(err and M.last_error or nil, result)
    end
  end, bufnr)
end

--- Show the diff applying `update` to `bufnr` would make, in a new split.
function M.preview_text(bufnr, update, on_done)
  local client, msg = client_for(bufnr)
  if not client then
    notify("Fast Apply: " .. msg, vim.log.levels.ERROR)
    if on_done then
      on_done(msg)
    end
    return
  end
  M.pending = M.pending + 1
  request(client, "workspace/executeCommand", {
    command = "fastapply.previewEdit",
    arguments = arguments(bufnr, update),
  }, function(err, result)
    M.pending = M.pending - 1
    if err then
      M.last_error = err.message or tostring(err)
      notify("Fast Apply preview failed: " .. M.last_error, vim.log.levels.ERROR)
      if on_done then
        on_done(M.last_error)
      end
      return
    end
    local diff = result.diff ~= "" and result.diff or "(no change)\n"
    vim.cmd("botright new")
    local buf = vim.api.nvim_get_current_buf()
    vim.bo[buf].buftype = "nofile"
    vim.bo[buf].bufhidden = "wipe"
    vim.bo[buf].swapfile = false
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split((diff:gsub("\n$", "")), "\n", { plain = true }))
    vim.bo[buf].modifiable = false
    vim.bo[buf].filetype = "diff"
    pcall(vim.api.nvim_buf_set_name, buf, "fastapply://preview/" .. vim.fn.fnamemodify(
      vim.api.nvim_buf_get_name(bufnr), ":t") .. "#" .. buf)
    if on_done then
      on_done(nil, result, buf)
    end
  end, bufnr)
end

--- :FastApplyScratch: a scratch buffer (same filetype) whose :FastApply targets the current file.
function M.open_scratch()
  local target = vim.api.nvim_get_current_buf()
  if not is_file_buffer(target) then
    notify("Fast Apply: run :FastApplyScratch from the file to edit", vim.log.levels.ERROR)
    return
  end
  local ft = vim.bo[target].filetype
  vim.cmd("belowright new")
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = ft
  vim.b[buf].fastapply_target = target
  pcall(vim.api.nvim_buf_set_name, buf, "fastapply://scratch/" .. vim.fn.fnamemodify(
    vim.api.nvim_buf_get_name(target), ":t") .. "#" .. buf)
  return buf
end

local function command_apply(opts)
  local update, target, msg = resolve(opts)
  if not update then
    M.last_error = msg
    notify("Fast Apply: " .. msg, vim.log.levels.ERROR)
    return
  end
  local scratch = vim.b.fastapply_target and vim.api.nvim_get_current_buf() or nil
  M.apply_text(target, update, function(err)
    if not err and scratch and M.config.close_scratch and vim.api.nvim_buf_is_valid(scratch) then
      vim.api.nvim_buf_delete(scratch, { force = true })
    end
  end)
end

local function command_preview(opts)
  local update, target, msg = resolve(opts)
  if not update then
    notify("Fast Apply: " .. msg, vim.log.levels.ERROR)
    return
  end
  M.preview_text(target, update)
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", M.config, opts or {})
  if type(M.config.cmd) == "string" then
    M.config.cmd = { M.config.cmd }
  end
  vim.api.nvim_create_user_command("FastApply", command_apply, {
    nargs = "?",
    range = true,
    desc = "Apply a lazy edit snippet (register, selection or scratch buffer) to the file",
  })
  vim.api.nvim_create_user_command("FastApplyPreview", command_preview, {
    nargs = "?",
    range = true,
    desc = "Show the diff a Fast Apply would make",
  })
  vim.api.nvim_create_user_command("FastApplyScratch", M.open_scratch, { desc = "Open a Fast Apply scratch buffer" })

  local group = vim.api.nvim_create_augroup("fastapply", { clear = true })
  if M.config.auto_attach then
    vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
      group = group,
      callback = function(ev)
        M.attach(ev.buf)
      end,
    })
  end
  if M.config.progress then
    vim.api.nvim_create_autocmd("LspProgress", {
      group = group,
      callback = function(ev)
        local client = vim.lsp.get_client_by_id(ev.data.client_id)
        local value = ev.data.params and ev.data.params.value
        if not client or client.name ~= M.config.name or type(value) ~= "table" then
          return
        end
        local text = value.title or "Fast Apply"
        if value.message then
          text = text .. ": " .. value.message
        end
        if value.percentage then
          text = string.format("%s (%d%%)", text, value.percentage)
        end
        vim.api.nvim_echo({ { text } }, false, {})
      end,
    })
  end
  return M
end

return M
