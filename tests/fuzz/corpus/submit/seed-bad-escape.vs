buffer t 4 text "\q"
