# device.vs - a DFA table and reference data copied once into device buffers
# (VYRE_BUF_DEVICE: their bytes never map into the heap), then used by items.
dfa alerts error warn fail
buffer table alerts device     # the same size as the compiled table
item COPY alerts table         # the table crosses to the device once
buffer log 64 text "warn: disk almost full; error: io; retry failed; errors: 2\n"
buffer hits 4
item DFA_SCAN log hits table   # scans with the device copy of the table
buffer ref 16 words 1 2 3 4
buffer dref 16 device
item COPY ref dref
buffer out 16
item ADD dref out 100          # device -> heap: out = ref + 100
item SUM dref hits fence       # a device input reduced into a heap word
print out
print hits
