;;; eglot.el --- Emacs (28+) with eglot against `laya serve': a diagnostic and a completion in a
;;; text buffer. Run by tests/lsp.rs in batch mode; writes what it saw to $LAYA_EDITOR_OUT.
(require 'package)
(add-to-list 'package-directory-list "/usr/share/emacs/site-lisp/elpa")
(package-initialize)
(require 'eglot)
(require 'json)
(setq eglot-sync-connect 30)
(let* ((file (getenv "LAYA_EDITOR_FILE"))
       (out (getenv "LAYA_EDITOR_OUT"))
       (result '()))
  (condition-case err
      (progn
        (find-file file)
        (text-mode)
        (let* ((project (cons 'transient (file-name-directory file)))
               (server (eglot '(text-mode) project 'eglot-lsp-server
                              (list (getenv "LAYA_BIN") "serve") "plaintext")))
          (push (cons 'connected (if server t :false)) result)
          ;; Diagnostics arrive through flymake.
          (let ((deadline (+ (float-time) 60)) diags)
            (while (and (< (float-time) deadline)
                        (null (setq diags (flymake-diagnostics))))
              (accept-process-output nil 0.1))
            (push (cons 'diagnostics
                        (vconcat (mapcar (lambda (d)
                                           (list (cons 'beg (1- (flymake-diagnostic-beg d)))
                                                 (cons 'text (flymake-diagnostic-text d))))
                                         diags)))
                  result))
          ;; A completion at the end of line 3 ("The capital of France is Pa").
          (goto-char (point-min))
          (forward-line 2)
          (end-of-line)
          (let* ((resp (jsonrpc-request server :textDocument/completion
                                        (append (eglot--TextDocumentPositionParams)
                                                '(:context (:triggerKind 1)))))
                 (items (if (vectorp resp) resp (plist-get resp :items))))
            (push (cons 'completions (vconcat (mapcar (lambda (i) (plist-get i :label)) items))) result))
          (push (cons 'ok t) result)))
    (error (push (cons 'ok :false) result)
           (push (cons 'error (format "%S" err)) result)))
  (with-temp-file out (insert (json-encode result)))
  (kill-emacs 0))
