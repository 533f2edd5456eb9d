/* Room for a CodeView debug record in the bare test images (test/image/
 * image.mk): test/image/pe_codeview.c writes a debug directory entry and
 * an RSDS record here after objcopy made the PE, and points the PE's debug
 * data directory at it, as EDK2's GenFw does for its images. The image then
 * names its ELF debug file (the .so, DWARF kept) by path and by a GUID taken
 * from the .so's GNU build ID, which is what the host's --symbols matches.
 * In .data (initialised, so the bytes are in the file), 4-byte aligned. */
__attribute__((used, aligned(4))) unsigned char ptb_codeview_area[512] = { 1 };
