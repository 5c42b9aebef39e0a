//go:build !purego

#include "textflag.h"

// The layout of wideState (wide_amd64.go, TestWideStateLayout).
#define W_DELTA 0
#define W_TEXT 8
#define W_HITS 16
#define W_NHITS 24
#define W_HITEND 32
#define W_OUT 40
#define W_COLS 48
#define W_POS 176
#define W_ROWS 432
#define W_TBUF 688

// Registers: Z0-Z3 the chains' row offsets (16 chains each), Z4-Z7 their
// positions in the text, Z8-Z11 the four text bytes of each chain for the
// block, Z12:Z13 the column table, Z14 bytes 0xFF, Z15 out, Z16-Z19
// scratch, Z20 fours; AX the table, BX the text, CX the hit buffer, SI the
// hits stored, R8 the hit limit, DX the blocks asked for, R10 those run.

// One chain group's step on the byte at bit shift SH of its text dwords:
// the column of each chain's byte (the permute maps every byte of the
// dword, and the mask keeps the one wanted), added to its row offset, is
// the index of its transition.
#define STEP(SH, T, R, S) \
	VPSRLD $SH, T, S; \
	VPERMI2B Z13, Z12, S; \
	VPANDD Z14, S, S; \
	VPADDD R, S, S; \
	KXNORW K0, K0, K1; \
	VPGATHERDD (AX)(S*4), K1, R

// STEP for bytes that are already columns (wideTranspose maps them).
#define STEPC(SH, T, R, S) \
	VPSRLD $SH, T, S; \
	VPANDD Z14, S, S; \
	VPADDD R, S, S; \
	KXNORW K0, K0, K1; \
	VPGATHERDD (AX)(S*4), K1, R

// The states with outputs of one group, appended to the hit buffer:
// compressed in a register and stored whole (within wideHitRoom, see
// wideHits), which took 2-3% off BenchmarkKeywords' wide runs against
// VPCOMPRESSD to memory.
#define KEEP(R, K) \
	VPCOMPRESSD R, K, Z16; \
	VMOVDQU32 Z16, (CX)(SI*4); \
	KMOVW K, R11; \
	POPCNTL R11, R11; \
	ADDQ R11, SI

// One test for a state with outputs (a row from out on) in any of the four
// groups; the rare block that keeps them is jumped over.
#define HITS4(SKIP) \
	VPCMPUD $5, Z15, Z0, K3; \
	VPCMPUD $5, Z15, Z1, K4; \
	VPCMPUD $5, Z15, Z2, K5; \
	VPCMPUD $5, Z15, Z3, K6; \
	KORW K3, K4, K1; \
	KORW K5, K6, K2; \
	KORTESTW K1, K2; \
	JZ SKIP; \
	KEEP(Z0, K3); \
	KEEP(Z1, K4); \
	KEEP(Z2, K5); \
	KEEP(Z3, K6); \
SKIP:

// A step of all four groups, and the test for outputs.
#define STEP4(SH, SKIP) \
	STEP(SH, Z8, Z0, Z16); \
	STEP(SH, Z9, Z1, Z17); \
	STEP(SH, Z10, Z2, Z18); \
	STEP(SH, Z11, Z3, Z19); \
	HITS4(SKIP)

// STEP4 with STEPC.
#define STEP4C(SH, SKIP) \
	STEPC(SH, Z8, Z0, Z16); \
	STEPC(SH, Z9, Z1, Z17); \
	STEPC(SH, Z10, Z2, Z18); \
	STEPC(SH, Z11, Z3, Z19); \
	HITS4(SKIP)

// ENTER loads what both walks keep in registers from the wideState at DI;
// LEAVE stores back what they change.
#define ENTER \
	MOVQ W_DELTA(DI), AX; \
	MOVQ W_HITS(DI), CX; \
	MOVQ W_NHITS(DI), SI; \
	MOVQ W_HITEND(DI), R8; \
	VMOVDQU64 W_COLS(DI), Z12; \
	VMOVDQU64 W_COLS+64(DI), Z13; \
	VPBROADCASTD W_OUT(DI), Z15; \
	MOVL $0xFF, R9; \
	VPBROADCASTD R9, Z14; \
	VMOVDQU32 W_ROWS(DI), Z0; \
	VMOVDQU32 W_ROWS+64(DI), Z1; \
	VMOVDQU32 W_ROWS+128(DI), Z2; \
	VMOVDQU32 W_ROWS+192(DI), Z3

#define LEAVE \
	VMOVDQU32 Z0, W_ROWS(DI); \
	VMOVDQU32 Z1, W_ROWS+64(DI); \
	VMOVDQU32 Z2, W_ROWS+128(DI); \
	VMOVDQU32 Z3, W_ROWS+192(DI); \
	MOVQ SI, W_NHITS(DI); \
	VZEROUPPER

// func wideWalk(w *wideState, blocks int) int
TEXT ·wideWalk(SB), NOSPLIT, $0-24
	MOVQ w+0(FP), DI
	MOVQ blocks+8(FP), DX
	ENTER
	MOVQ W_TEXT(DI), BX
	MOVL $4, R9
	VPBROADCASTD R9, Z20
	VMOVDQU32 W_POS(DI), Z4
	VMOVDQU32 W_POS+64(DI), Z5
	VMOVDQU32 W_POS+128(DI), Z6
	VMOVDQU32 W_POS+192(DI), Z7
	XORQ R10, R10

loop:
	CMPQ R10, DX
	JAE done
	CMPQ SI, R8
	JA done
	// Each chain's next four bytes, one dword.
	KXNORW K0, K0, K1
	VPGATHERDD (BX)(Z4*1), K1, Z8
	KXNORW K0, K0, K1
	VPGATHERDD (BX)(Z5*1), K1, Z9
	KXNORW K0, K0, K1
	VPGATHERDD (BX)(Z6*1), K1, Z10
	KXNORW K0, K0, K1
	VPGATHERDD (BX)(Z7*1), K1, Z11
	VPADDD Z20, Z4, Z4
	VPADDD Z20, Z5, Z5
	VPADDD Z20, Z6, Z6
	VPADDD Z20, Z7, Z7
	STEP4(0, step1)
	STEP4(8, step2)
	STEP4(16, step3)
	STEP4(24, step4)
	INCQ R10
	JMP loop

done:
	VMOVDQU32 Z4, W_POS(DI)
	VMOVDQU32 Z5, W_POS+64(DI)
	VMOVDQU32 Z6, W_POS+128(DI)
	VMOVDQU32 Z7, W_POS+192(DI)
	LEAVE
	MOVQ R10, ret+16(FP)
	RET

// func wideWalkBuf(w *wideState, from, to int) int
//
// As wideWalk, for blocks from to to of w.tbuf, which wideTranspose
// filled: the text bytes are loaded, not gathered.
TEXT ·wideWalkBuf(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), DI
	MOVQ from+8(FP), R10
	MOVQ to+16(FP), DX
	ENTER
	// BX: the block's row of tbuf.
	MOVQ R10, BX
	SHLQ $8, BX
	LEAQ W_TBUF(DI)(BX*1), BX

bloop:
	CMPQ R10, DX
	JAE bdone
	CMPQ SI, R8
	JA bdone
	VMOVDQU32 (BX), Z8
	VMOVDQU32 64(BX), Z9
	VMOVDQU32 128(BX), Z10
	VMOVDQU32 192(BX), Z11
	ADDQ $256, BX
	STEP4C(0, bstep1)
	STEP4C(8, bstep2)
	STEP4C(16, bstep3)
	STEP4C(24, bstep4)
	INCQ R10
	JMP bloop

bdone:
	LEAVE
	MOVQ R10, ret+24(FP)
	RET

// Rows A and B interleaved by dwords (lo) and by their upper dwords (hi).
#define UNPACK32(A, B, LO, HI) \
	VPUNPCKLDQ B, A, LO; \
	VPUNPCKHDQ B, A, HI

#define UNPACK64(A, B, LO, HI) \
	VPUNPCKLQDQ B, A, LO; \
	VPUNPCKHQDQ B, A, HI

#define SHUF128(A, B, LO, HI) \
	VSHUFI32X4 $0x88, B, A, LO; \
	VSHUFI32X4 $0xdd, B, A, HI

// One group of sixteen chains: the next 64 bytes of each (16 dwords), read
// at their positions, transposed, so that row k of the group in tbuf holds
// each chain's dword k, and mapped to their columns (a permute per 64
// bytes here, not per sixteen in each step).
#define TRANSPOSE(G) \
	MOVL (W_POS+64*G+0)(DI), R9; VMOVDQU32 (BX)(R9*1), Z0; \
	MOVL (W_POS+64*G+4)(DI), R9; VMOVDQU32 (BX)(R9*1), Z1; \
	MOVL (W_POS+64*G+8)(DI), R9; VMOVDQU32 (BX)(R9*1), Z2; \
	MOVL (W_POS+64*G+12)(DI), R9; VMOVDQU32 (BX)(R9*1), Z3; \
	MOVL (W_POS+64*G+16)(DI), R9; VMOVDQU32 (BX)(R9*1), Z4; \
	MOVL (W_POS+64*G+20)(DI), R9; VMOVDQU32 (BX)(R9*1), Z5; \
	MOVL (W_POS+64*G+24)(DI), R9; VMOVDQU32 (BX)(R9*1), Z6; \
	MOVL (W_POS+64*G+28)(DI), R9; VMOVDQU32 (BX)(R9*1), Z7; \
	MOVL (W_POS+64*G+32)(DI), R9; VMOVDQU32 (BX)(R9*1), Z8; \
	MOVL (W_POS+64*G+36)(DI), R9; VMOVDQU32 (BX)(R9*1), Z9; \
	MOVL (W_POS+64*G+40)(DI), R9; VMOVDQU32 (BX)(R9*1), Z10; \
	MOVL (W_POS+64*G+44)(DI), R9; VMOVDQU32 (BX)(R9*1), Z11; \
	MOVL (W_POS+64*G+48)(DI), R9; VMOVDQU32 (BX)(R9*1), Z12; \
	MOVL (W_POS+64*G+52)(DI), R9; VMOVDQU32 (BX)(R9*1), Z13; \
	MOVL (W_POS+64*G+56)(DI), R9; VMOVDQU32 (BX)(R9*1), Z14; \
	MOVL (W_POS+64*G+60)(DI), R9; VMOVDQU32 (BX)(R9*1), Z15; \
	UNPACK32(Z0, Z1, Z16, Z17); \
	UNPACK32(Z2, Z3, Z18, Z19); \
	UNPACK32(Z4, Z5, Z20, Z21); \
	UNPACK32(Z6, Z7, Z22, Z23); \
	UNPACK32(Z8, Z9, Z24, Z25); \
	UNPACK32(Z10, Z11, Z26, Z27); \
	UNPACK32(Z12, Z13, Z28, Z29); \
	UNPACK32(Z14, Z15, Z30, Z31); \
	UNPACK64(Z16, Z18, Z0, Z1); \
	UNPACK64(Z17, Z19, Z2, Z3); \
	UNPACK64(Z20, Z22, Z4, Z5); \
	UNPACK64(Z21, Z23, Z6, Z7); \
	UNPACK64(Z24, Z26, Z8, Z9); \
	UNPACK64(Z25, Z27, Z10, Z11); \
	UNPACK64(Z28, Z30, Z12, Z13); \
	UNPACK64(Z29, Z31, Z14, Z15); \
	SHUF128(Z0, Z4, Z16, Z20); \
	SHUF128(Z1, Z5, Z17, Z21); \
	SHUF128(Z2, Z6, Z18, Z22); \
	SHUF128(Z3, Z7, Z19, Z23); \
	SHUF128(Z8, Z12, Z24, Z28); \
	SHUF128(Z9, Z13, Z25, Z29); \
	SHUF128(Z10, Z14, Z26, Z30); \
	SHUF128(Z11, Z15, Z27, Z31); \
	SHUF128(Z16, Z24, Z0, Z8); \
	SHUF128(Z17, Z25, Z1, Z9); \
	SHUF128(Z18, Z26, Z2, Z10); \
	SHUF128(Z19, Z27, Z3, Z11); \
	SHUF128(Z20, Z28, Z4, Z12); \
	SHUF128(Z21, Z29, Z5, Z13); \
	SHUF128(Z22, Z30, Z6, Z14); \
	SHUF128(Z23, Z31, Z7, Z15); \
	VMOVDQU64 W_COLS(DI), Z30; \
	VMOVDQU64 W_COLS+64(DI), Z31; \
	VPERMI2B Z31, Z30, Z0; \
	VPERMI2B Z31, Z30, Z1; \
	VPERMI2B Z31, Z30, Z2; \
	VPERMI2B Z31, Z30, Z3; \
	VPERMI2B Z31, Z30, Z4; \
	VPERMI2B Z31, Z30, Z5; \
	VPERMI2B Z31, Z30, Z6; \
	VPERMI2B Z31, Z30, Z7; \
	VPERMI2B Z31, Z30, Z8; \
	VPERMI2B Z31, Z30, Z9; \
	VPERMI2B Z31, Z30, Z10; \
	VPERMI2B Z31, Z30, Z11; \
	VPERMI2B Z31, Z30, Z12; \
	VPERMI2B Z31, Z30, Z13; \
	VPERMI2B Z31, Z30, Z14; \
	VPERMI2B Z31, Z30, Z15; \
	VMOVDQU32 Z0, (W_TBUF+0*256+64*G)(DI); \
	VMOVDQU32 Z1, (W_TBUF+1*256+64*G)(DI); \
	VMOVDQU32 Z2, (W_TBUF+2*256+64*G)(DI); \
	VMOVDQU32 Z3, (W_TBUF+3*256+64*G)(DI); \
	VMOVDQU32 Z4, (W_TBUF+4*256+64*G)(DI); \
	VMOVDQU32 Z5, (W_TBUF+5*256+64*G)(DI); \
	VMOVDQU32 Z6, (W_TBUF+6*256+64*G)(DI); \
	VMOVDQU32 Z7, (W_TBUF+7*256+64*G)(DI); \
	VMOVDQU32 Z8, (W_TBUF+8*256+64*G)(DI); \
	VMOVDQU32 Z9, (W_TBUF+9*256+64*G)(DI); \
	VMOVDQU32 Z10, (W_TBUF+10*256+64*G)(DI); \
	VMOVDQU32 Z11, (W_TBUF+11*256+64*G)(DI); \
	VMOVDQU32 Z12, (W_TBUF+12*256+64*G)(DI); \
	VMOVDQU32 Z13, (W_TBUF+13*256+64*G)(DI); \
	VMOVDQU32 Z14, (W_TBUF+14*256+64*G)(DI); \
	VMOVDQU32 Z15, (W_TBUF+15*256+64*G)(DI)

// ADVANCE adds Z17 to the sixteen positions at W_POS+OFF.
#define ADVANCE(OFF) \
	VMOVDQU32 (W_POS+OFF)(DI), Z16; \
	VPADDD Z17, Z16, Z16; \
	VMOVDQU32 Z16, (W_POS+OFF)(DI)

// func wideTranspose(w *wideState)
//
// Fills w.tbuf with the next sixteen blocks of every chain and moves the
// chains' positions past them. Gathering four bytes per chain per block
// took the kernel half its time; sixteen loads and a transpose per sixteen
// chains and sixteen blocks take a few percent.
TEXT ·wideTranspose(SB), NOSPLIT, $0-8
	MOVQ w+0(FP), DI
	MOVQ W_TEXT(DI), BX
	TRANSPOSE(0)
	TRANSPOSE(1)
	TRANSPOSE(2)
	TRANSPOSE(3)
	// Every chain's position moves on by the 64 bytes read.
	MOVL $64, R9
	VPBROADCASTD R9, Z17
	ADVANCE(0)
	ADVANCE(64)
	ADVANCE(128)
	ADVANCE(192)
	VZEROUPPER
	RET

// func encodeASCIIUnits(dst []byte, units []uint16, tab *[128]byte) int
//
// Writes tab[u] to dst for the units of units, 32 at a time, up to the
// first 32 that hold one from 128 up (or fewer than 32 left), and returns
// how many it wrote. dst is at least as long as units.
TEXT ·encodeASCIIUnits(SB), NOSPLIT, $0-64
	MOVQ dst_base+0(FP), DI
	MOVQ units_base+24(FP), SI
	MOVQ units_len+32(FP), CX
	MOVQ tab+48(FP), AX
	VMOVDQU64 (AX), Z2
	VMOVDQU64 64(AX), Z3
	MOVL $0xFF80FF80, R8
	VPBROADCASTD R8, Z4
	XORQ BX, BX

eloop:
	LEAQ 32(BX), DX
	CMPQ DX, CX
	JA   edone
	VMOVDQU64 (SI)(BX*2), Z0
	VPTESTMW  Z4, Z0, K1
	KORTESTD  K1, K1
	JNZ       edone
	VPMOVWB   Z0, Y1
	VPERMI2B  Z3, Z2, Z1
	VMOVDQU   Y1, (DI)(BX*1)
	MOVQ      DX, BX
	JMP       eloop

edone:
	VZEROUPPER
	MOVQ BX, ret+56(FP)
	RET
