/*
 * A behavioural model of the 7-series RAMB36E1 block RAM, for simulating the card's
 * post-synthesis netlist under Verilator. Yosys's own cells_sim.v declares RAMB36E1 with its
 * ports, parameters and timing only (no contents, no outputs), so a netlist with block RAMs
 * reads zeros from them; this file is read before it, in its place (card-sim's netlist tops
 * waive Verilator's MODDUP for it).
 *
 * It models the one configuration Yosys maps the card's memories to (the frame sources'
 * FIFOs): true dual-port mode used as a simple dual-port RAM, port A writing 9 bits (8 data
 * and 1 parity) and port B reading 9 bits, 4096 deep, both ports on one clock, no output
 * registers, READ_FIRST (a read of the address being written returns the old word, as UG473
 * describes for READ_FIRST). An initial check stops on any other configuration, so that a
 * netlist needing more of the primitive fails loudly rather than simulating wrongly. The
 * INIT_* contents are taken as zero (the card's memories have no initial contents).
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

// The primitive's whole interface is declared, as the netlist may set any of it; the model
// reads only what its one configuration uses.
/* verilator lint_off UNUSEDPARAM */
// The same holds for its ports.
/* verilator lint_off UNUSEDSIGNAL */
module RAMB36E1 #
(
    // Output registers of ports A and B (only 0, none, is modelled)
    parameter integer DOA_REG = 0,
    parameter integer DOB_REG = 0,
    // Cascading (only "NONE" is modelled)
    parameter RAM_EXTENSION_A = "NONE",
    parameter RAM_EXTENSION_B = "NONE",
    // "TDP" true dual-port (the only mode modelled) or "SDP"
    parameter RAM_MODE = "TDP",
    // Port widths in bits (modelled: A writes 9, B reads 9)
    parameter integer READ_WIDTH_A = 0,
    parameter integer READ_WIDTH_B = 0,
    parameter integer WRITE_WIDTH_A = 0,
    parameter integer WRITE_WIDTH_B = 0,
    // Output latch values after configuration
    parameter [71:0] INIT_A = 72'd0,
    parameter [71:0] INIT_B = 72'd0,
    // Output latch values on reset
    parameter [71:0] SRVAL_A = 72'd0,
    parameter [71:0] SRVAL_B = 72'd0,
    // Read-during-write behaviour (only "READ_FIRST" is modelled)
    parameter WRITE_MODE_A = "WRITE_FIRST",
    parameter WRITE_MODE_B = "WRITE_FIRST",
    // Initial contents (taken as zero)
    parameter [255:0] INIT_00 = 256'd0, parameter [255:0] INIT_01 = 256'd0,
    parameter [255:0] INIT_02 = 256'd0, parameter [255:0] INIT_03 = 256'd0,
    parameter [255:0] INIT_04 = 256'd0, parameter [255:0] INIT_05 = 256'd0,
    parameter [255:0] INIT_06 = 256'd0, parameter [255:0] INIT_07 = 256'd0,
    parameter [255:0] INIT_08 = 256'd0, parameter [255:0] INIT_09 = 256'd0,
    parameter [255:0] INIT_0A = 256'd0, parameter [255:0] INIT_0B = 256'd0,
    parameter [255:0] INIT_0C = 256'd0, parameter [255:0] INIT_0D = 256'd0,
    parameter [255:0] INIT_0E = 256'd0, parameter [255:0] INIT_0F = 256'd0,
    parameter [255:0] INIT_10 = 256'd0, parameter [255:0] INIT_11 = 256'd0,
    parameter [255:0] INIT_12 = 256'd0, parameter [255:0] INIT_13 = 256'd0,
    parameter [255:0] INIT_14 = 256'd0, parameter [255:0] INIT_15 = 256'd0,
    parameter [255:0] INIT_16 = 256'd0, parameter [255:0] INIT_17 = 256'd0,
    parameter [255:0] INIT_18 = 256'd0, parameter [255:0] INIT_19 = 256'd0,
    parameter [255:0] INIT_1A = 256'd0, parameter [255:0] INIT_1B = 256'd0,
    parameter [255:0] INIT_1C = 256'd0, parameter [255:0] INIT_1D = 256'd0,
    parameter [255:0] INIT_1E = 256'd0, parameter [255:0] INIT_1F = 256'd0,
    parameter [255:0] INIT_20 = 256'd0, parameter [255:0] INIT_21 = 256'd0,
    parameter [255:0] INIT_22 = 256'd0, parameter [255:0] INIT_23 = 256'd0,
    parameter [255:0] INIT_24 = 256'd0, parameter [255:0] INIT_25 = 256'd0,
    parameter [255:0] INIT_26 = 256'd0, parameter [255:0] INIT_27 = 256'd0,
    parameter [255:0] INIT_28 = 256'd0, parameter [255:0] INIT_29 = 256'd0,
    parameter [255:0] INIT_2A = 256'd0, parameter [255:0] INIT_2B = 256'd0,
    parameter [255:0] INIT_2C = 256'd0, parameter [255:0] INIT_2D = 256'd0,
    parameter [255:0] INIT_2E = 256'd0, parameter [255:0] INIT_2F = 256'd0,
    parameter [255:0] INIT_30 = 256'd0, parameter [255:0] INIT_31 = 256'd0,
    parameter [255:0] INIT_32 = 256'd0, parameter [255:0] INIT_33 = 256'd0,
    parameter [255:0] INIT_34 = 256'd0, parameter [255:0] INIT_35 = 256'd0,
    parameter [255:0] INIT_36 = 256'd0, parameter [255:0] INIT_37 = 256'd0,
    parameter [255:0] INIT_38 = 256'd0, parameter [255:0] INIT_39 = 256'd0,
    parameter [255:0] INIT_3A = 256'd0, parameter [255:0] INIT_3B = 256'd0,
    parameter [255:0] INIT_3C = 256'd0, parameter [255:0] INIT_3D = 256'd0,
    parameter [255:0] INIT_3E = 256'd0, parameter [255:0] INIT_3F = 256'd0,
    parameter [255:0] INIT_40 = 256'd0, parameter [255:0] INIT_41 = 256'd0,
    parameter [255:0] INIT_42 = 256'd0, parameter [255:0] INIT_43 = 256'd0,
    parameter [255:0] INIT_44 = 256'd0, parameter [255:0] INIT_45 = 256'd0,
    parameter [255:0] INIT_46 = 256'd0, parameter [255:0] INIT_47 = 256'd0,
    parameter [255:0] INIT_48 = 256'd0, parameter [255:0] INIT_49 = 256'd0,
    parameter [255:0] INIT_4A = 256'd0, parameter [255:0] INIT_4B = 256'd0,
    parameter [255:0] INIT_4C = 256'd0, parameter [255:0] INIT_4D = 256'd0,
    parameter [255:0] INIT_4E = 256'd0, parameter [255:0] INIT_4F = 256'd0,
    parameter [255:0] INIT_50 = 256'd0, parameter [255:0] INIT_51 = 256'd0,
    parameter [255:0] INIT_52 = 256'd0, parameter [255:0] INIT_53 = 256'd0,
    parameter [255:0] INIT_54 = 256'd0, parameter [255:0] INIT_55 = 256'd0,
    parameter [255:0] INIT_56 = 256'd0, parameter [255:0] INIT_57 = 256'd0,
    parameter [255:0] INIT_58 = 256'd0, parameter [255:0] INIT_59 = 256'd0,
    parameter [255:0] INIT_5A = 256'd0, parameter [255:0] INIT_5B = 256'd0,
    parameter [255:0] INIT_5C = 256'd0, parameter [255:0] INIT_5D = 256'd0,
    parameter [255:0] INIT_5E = 256'd0, parameter [255:0] INIT_5F = 256'd0,
    parameter [255:0] INIT_60 = 256'd0, parameter [255:0] INIT_61 = 256'd0,
    parameter [255:0] INIT_62 = 256'd0, parameter [255:0] INIT_63 = 256'd0,
    parameter [255:0] INIT_64 = 256'd0, parameter [255:0] INIT_65 = 256'd0,
    parameter [255:0] INIT_66 = 256'd0, parameter [255:0] INIT_67 = 256'd0,
    parameter [255:0] INIT_68 = 256'd0, parameter [255:0] INIT_69 = 256'd0,
    parameter [255:0] INIT_6A = 256'd0, parameter [255:0] INIT_6B = 256'd0,
    parameter [255:0] INIT_6C = 256'd0, parameter [255:0] INIT_6D = 256'd0,
    parameter [255:0] INIT_6E = 256'd0, parameter [255:0] INIT_6F = 256'd0,
    parameter [255:0] INIT_70 = 256'd0, parameter [255:0] INIT_71 = 256'd0,
    parameter [255:0] INIT_72 = 256'd0, parameter [255:0] INIT_73 = 256'd0,
    parameter [255:0] INIT_74 = 256'd0, parameter [255:0] INIT_75 = 256'd0,
    parameter [255:0] INIT_76 = 256'd0, parameter [255:0] INIT_77 = 256'd0,
    parameter [255:0] INIT_78 = 256'd0, parameter [255:0] INIT_79 = 256'd0,
    parameter [255:0] INIT_7A = 256'd0, parameter [255:0] INIT_7B = 256'd0,
    parameter [255:0] INIT_7C = 256'd0, parameter [255:0] INIT_7D = 256'd0,
    parameter [255:0] INIT_7E = 256'd0, parameter [255:0] INIT_7F = 256'd0,
    parameter [255:0] INITP_00 = 256'd0, parameter [255:0] INITP_01 = 256'd0,
    parameter [255:0] INITP_02 = 256'd0, parameter [255:0] INITP_03 = 256'd0,
    parameter [255:0] INITP_04 = 256'd0, parameter [255:0] INITP_05 = 256'd0,
    parameter [255:0] INITP_06 = 256'd0, parameter [255:0] INITP_07 = 256'd0,
    parameter [255:0] INITP_08 = 256'd0, parameter [255:0] INITP_09 = 256'd0,
    parameter [255:0] INITP_0A = 256'd0, parameter [255:0] INITP_0B = 256'd0,
    parameter [255:0] INITP_0C = 256'd0, parameter [255:0] INITP_0D = 256'd0,
    parameter [255:0] INITP_0E = 256'd0, parameter [255:0] INITP_0F = 256'd0
)
(
    input  wire        CLKARDCLK,
    input  wire        CLKBWRCLK,
    input  wire [15:0] ADDRARDADDR,
    input  wire [15:0] ADDRBWRADDR,
    input  wire [31:0] DIADI,
    input  wire [31:0] DIBDI,
    input  wire [3:0]  DIPADIP,
    input  wire [3:0]  DIPBDIP,
    output wire [31:0] DOADO,
    output wire [31:0] DOBDO,
    output wire [3:0]  DOPADOP,
    output wire [3:0]  DOPBDOP,
    input  wire        ENARDEN,
    input  wire        ENBWREN,
    input  wire        REGCEAREGCE,
    input  wire        REGCEB,
    input  wire        RSTRAMARSTRAM,
    input  wire        RSTRAMB,
    input  wire        RSTREGARSTREG,
    input  wire        RSTREGB,
    input  wire [3:0]  WEA,
    input  wire [7:0]  WEBWE
);

// check configuration
initial begin
    if (RAM_MODE != "TDP" || READ_WIDTH_A != 0 || WRITE_WIDTH_B != 0
            || WRITE_WIDTH_A != 9 || READ_WIDTH_B != 9 || DOA_REG != 0 || DOB_REG != 0
            || RAM_EXTENSION_A != "NONE" || RAM_EXTENSION_B != "NONE"
            || WRITE_MODE_A != "READ_FIRST") begin
        $error("Error: this RAMB36E1 model covers TDP, A writing 9 bits, B reading 9 bits, no output registers, READ_FIRST only (instance %m)");
        $finish;
    end
end

reg [8:0] mem[4095:0];
reg [8:0] b_out_reg = INIT_B[8:0];

integer k;
initial begin
    for (k = 0; k < 4096; k = k + 1) begin
        mem[k] = 9'd0;
    end
end

// Port A writes; the write enable of a 9-bit port is WEA[0].
always @(posedge CLKARDCLK) begin
    if (ENARDEN && WEA[0]) begin
        mem[ADDRARDADDR[14:3]] <= {DIPADIP[0], DIADI[7:0]};
    end
end

// Port B reads into its output latch: the word as it was before any write at the same edge.
always @(posedge CLKBWRCLK) begin
    if (RSTRAMB) begin
        b_out_reg <= SRVAL_B[8:0];
    end else if (ENBWREN) begin
        b_out_reg <= mem[ADDRBWRADDR[14:3]];
    end
end

assign DOADO = 32'd0;
assign DOPADOP = 4'd0;
assign DOBDO = {24'd0, b_out_reg[7:0]};
assign DOPBDOP = {3'd0, b_out_reg[8]};

endmodule

`resetall
