//go:build !purego

#include "textflag.h"

// NIBBLES loads the nibble tables at AX (nibbleTablesOf) into Y8 to Y15,
// and 16s into Y6 for LOOKUP128 (R8 spoiled).
#define NIBBLES \
	MOVL         $0x10101010, R8 \
	VMOVD        R8, X6 \
	VPBROADCASTD X6, Y6 \
	VMOVDQU 0(AX), Y8 \
	VMOVDQU 32(AX), Y9 \
	VMOVDQU 64(AX), Y10 \
	VMOVDQU 96(AX), Y11 \
	VMOVDQU 128(AX), Y12 \
	VMOVDQU 160(AX), Y13 \
	VMOVDQU 192(AX), Y14 \
	VMOVDQU 224(AX), Y15

// LOOKUP128 sets Y3 to the table's bytes for the bytes of Y2, all below
// 128, as the XOR over k <= b>>4 of table k at b-16k (Y6 holds 16s; Y2
// and Y4 spoiled).
#define LOOKUP128 \
	VPSHUFB   Y2, Y8, Y3 \
	VPSUBB    Y6, Y2, Y2 \
	VPSHUFB   Y2, Y9, Y4 \
	VPXOR     Y4, Y3, Y3 \
	VPSUBB    Y6, Y2, Y2 \
	VPSHUFB   Y2, Y10, Y4 \
	VPXOR     Y4, Y3, Y3 \
	VPSUBB    Y6, Y2, Y2 \
	VPSHUFB   Y2, Y11, Y4 \
	VPXOR     Y4, Y3, Y3 \
	VPSUBB    Y6, Y2, Y2 \
	VPSHUFB   Y2, Y12, Y4 \
	VPXOR     Y4, Y3, Y3 \
	VPSUBB    Y6, Y2, Y2 \
	VPSHUFB   Y2, Y13, Y4 \
	VPXOR     Y4, Y3, Y3 \
	VPSUBB    Y6, Y2, Y2 \
	VPSHUFB   Y2, Y14, Y4 \
	VPXOR     Y4, Y3, Y3 \
	VPSUBB    Y6, Y2, Y2 \
	VPSHUFB   Y2, Y15, Y4 \
	VPXOR     Y4, Y3, Y3

// func widenAVX2(units []uint16, raw []byte, i, k int) (iOut, kOut int)
//
// Writes raw's bytes from i to units from k, 32 a step, up to the first 32
// that hold a byte from 0x80 up or the last bytes that do not make 32, and
// returns where it stopped in both. units has room for every byte from i.
TEXT ·widenAVX2(SB), NOSPLIT, $0-80
	MOVQ units_base+0(FP), DI
	MOVQ raw_base+24(FP), SI
	MOVQ raw_len+32(FP), CX
	MOVQ i+48(FP), AX
	MOVQ k+56(FP), BX

wloop:
	LEAQ      32(AX), DX
	CMPQ      DX, CX
	JA        wdone
	VMOVDQU   (SI)(AX*1), Y0
	VPMOVMSKB Y0, R8
	TESTL     R8, R8
	JNZ       wdone
	VPMOVZXBW X0, Y1
	VEXTRACTI128 $1, Y0, X2
	VPMOVZXBW X2, Y2
	VMOVDQU   Y1, (DI)(BX*2)
	VMOVDQU   Y2, 32(DI)(BX*2)
	MOVQ      DX, AX
	ADDQ      $32, BX
	JMP       wloop

wdone:
	VZEROUPPER
	MOVQ AX, iOut+64(FP)
	MOVQ BX, kOut+72(FP)
	RET

// func encodeAVX2(dst []byte, units []uint16, nib *nibbleTables) int
//
// Writes tab[u] to dst for the units of units, 32 a step, up to the first
// 32 that hold one from 128 up (or fewer than 32 left), and returns how
// many it wrote; nib is tab's nibble tables (nibbleTablesOf). A unit u
// below 128 is looked up as the XOR over k <= u>>4 of nib[k][u&15]: the
// shuffle of table k at u-16k gives nothing where that is below zero (its
// top bit set), and the tables telescope.
TEXT ·encodeAVX2(SB), NOSPLIT, $0-64
	MOVQ dst_base+0(FP), DI
	MOVQ units_base+24(FP), SI
	MOVQ units_len+32(FP), CX
	MOVQ nib+48(FP), AX
	NIBBLES
	// VMOVD, not MOVD: a legacy SSE instruction among the AVX ones costs
	// a transition (see plain_amd64.s in jsonstr).
	MOVL         $0xFF80FF80, R8
	VMOVD        R8, X7
	VPBROADCASTD X7, Y7
	XORQ         BX, BX

eloop:
	LEAQ      32(BX), DX
	CMPQ      DX, CX
	JA        edone
	VMOVDQU   (SI)(BX*2), Y0
	VMOVDQU   32(SI)(BX*2), Y1
	VPOR      Y0, Y1, Y2
	VPTEST    Y7, Y2
	JNZ       edone
	VPACKUSWB Y1, Y0, Y2
	VPERMQ    $0xD8, Y2, Y2
	LOOKUP128
	VMOVDQU   Y3, (DI)(BX*1)
	MOVQ      DX, BX
	JMP       eloop

edone:
	VZEROUPPER
	MOVQ BX, ret+56(FP)
	RET

// func encodeBytesAVX2(dst, src []byte, nib *nibbleTables) int
//
// encodeAVX2 for bytes: writes tab[b] to dst for the bytes of src, 32 a
// step, up to the first 32 that hold one from 0x80 up (or fewer than 32
// left), and returns how many it wrote.
TEXT ·encodeBytesAVX2(SB), NOSPLIT, $0-64
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX
	MOVQ nib+48(FP), AX
	NIBBLES
	XORQ         BX, BX

bloop:
	LEAQ      32(BX), DX
	CMPQ      DX, CX
	JA        bdone
	VMOVDQU   (SI)(BX*1), Y2
	VPMOVMSKB Y2, R9
	TESTL     R9, R9
	JNZ       bdone
	LOOKUP128
	VMOVDQU   Y3, (DI)(BX*1)
	MOVQ      DX, BX
	JMP       bloop

bdone:
	VZEROUPPER
	MOVQ BX, ret+56(FP)
	RET

// func mapColsAVX2(dst, src []byte, nib *nibbleTables, high byte) int
//
// Writes each byte's column to dst, 32 bytes a step: those below 128
// through the nibble tables (LOOKUP128), the others all high. Returns how
// many it wrote: the whole blocks of 32.
TEXT ·mapColsAVX2(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX
	MOVQ nib+48(FP), AX
	NIBBLES
	MOVBLZX      high+56(FP), R8
	VMOVD        R8, X7
	VPBROADCASTB X7, Y7
	XORQ         BX, BX

mloop:
	LEAQ        32(BX), DX
	CMPQ        DX, CX
	JA          mdone
	VMOVDQU     (SI)(BX*1), Y2
	VMOVDQA     Y2, Y5
	LOOKUP128
	VPBLENDVB   Y5, Y7, Y3, Y3
	VMOVDQU     Y3, (DI)(BX*1)
	MOVQ        DX, BX
	JMP         mloop

mdone:
	VZEROUPPER
	MOVQ BX, ret+64(FP)
	RET
