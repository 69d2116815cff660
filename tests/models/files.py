"""The real compiled models under tests/models/ (README.md there names their sources)."""
import pathlib

HERE = pathlib.Path(__file__).parent

RETINAFACE = HERE / "bm1684" / "retinaface_mobilenet0.25_384x640_fp32_b1.bmodel"
FACE_DETECTION = HERE / "bm1684" / "face_detection_fp32_b1.bmodel"
FACE_INT8 = HERE / "bm1684" / "face_detection_int8_b4.bmodel"
YOLO_1684 = HERE / "bm1684" / "yolov5s_bm1684_f32.bmodel"
YOLO_1684X = HERE / "bm1684x" / "yolov5s_bm1684x_int8_sym.bmodel"
YUV2RGB = HERE / "bm1684x" / "Yuv2rgb_0_int8" / "compilation.bmodel"
# the BM1684X builds of four tdl_models networks (issue 27 item 2: each runs to its end)
FACE_ATTR_1684X = HERE / "bm1684x" / "cls_attribute_face_112_112_INT8_bm1684x.bmodel"
BABY_CRY_1684X = HERE / "bm1684x" / "cls_sound_babay_cry_188_40_INT8_bm1684x.bmodel"
HAND_KEYPOINT_1684X = HERE / "bm1684x" / "hand_keypoint_cls_bm1684x.bmodel"
TOPFORMER_1684X = HERE / "bm1684x" / "topformer_seg_motion_512_960_INT8_bm1684x.bmodel"
TDL_1684X = (FACE_ATTR_1684X, BABY_CRY_1684X, HAND_KEYPOINT_1684X, TOPFORMER_1684X)
RESNET_1688 = HERE / "bm1688" / "resnet50-v2_bm1688_2_int8_sym.bmodel"
YOLO_1688 = HERE / "bm1688" / "yolov5s_bm1688_int8_sym.bmodel"
YOLO_1688_CORE2 = HERE / "bm1688" / "yolov5s_bm1688_int8_sym_core2.bmodel"
FACE_ATTR_1688 = HERE / "bm1688" / "cls_attribute_face_112_112_INT8_bm1688.bmodel"
BABY_CRY_1688 = HERE / "bm1688" / "cls_sound_babay_cry_188_40_INT8_bm1688.bmodel"
BABY_CRY_184X = HERE / "cv184x" / "cls_sound_babay_cry_188_40_INT8_cv184x.bmodel"
# the same network and calibration compiled for two chips
TWINS = ((FACE_ATTR_1684X, FACE_ATTR_1688), (BABY_CRY_1684X, BABY_CRY_1688), (BABY_CRY_1684X, BABY_CRY_184X))
YOLO_1690 = HERE / "bm1690" / "yolov5s_bm1690_f16_core8.bmodel"
RESNET_1690_F8 = HERE / "bm1690" / "resnet50_v2_sg2260_f8e5m2.bmodel"
# the vendor's 8-core f16 MatMul with its model_runner input and output (kernel module zeroed)
MM_1690 = HERE / "bm1690" / "MM_0_f16_bm1690.bmodel"
MM_1690_REFERENCE = HERE / "bm1690" / "MM_0_f16_bm1690_reference.npz"
HAND_184X = HERE / "cv184x" / "cls_keypoint_hand_gesture_1_42_INT8_cv184x.bmodel"
HAND_181X = HERE / "cv181x" / "cls_keypoint_hand_gesture_1_42_INT8_cv181x.cvimodel"
TOPFORMER_181X = HERE / "cv181x" / "topformer_seg_motion_512_960_INT8_cv181x.cvimodel"
BABY_CRY_181X = HERE / "cv181x" / "cls_sound_babay_cry_188_40_INT8_cv181x.cvimodel"
# the TDL SDK's yolov8n COCO detector for two chips, and a crowd photo for it (issue 30 item 5)
YOLOV8_COCO_181X = HERE / "cv181x" / "yolov8n_det_coco80_640_640_INT8_cv181x.cvimodel"
# a MIX (int8 + bf16) build: bf16 convolutions and VLC-compressed bf16 weights
PLATE_181X = HERE / "cv181x" / "recognition_license_plate_24_96_MIX_cv181x.cvimodel"
YOLOV8_COCO_184X = HERE / "cv184x" / "yolov8n_det_coco80_640_640_INT8_cv184x.bmodel"
# a hand detector for two chips: grouped convolutions (CV181X: a group's result on lanes 4..7)
HAND_DET_181X = HERE / "cv181x" / "yolov8n_det_hand_mv3_384_640_INT8_cv181x.cvimodel"
HAND_DET_184X = HERE / "cv184x" / "yolov8n_det_hand_mv3_384_640_INT8_cv184x.bmodel"
# a face attribute classifier for two chips: the CV184X build ends in a bf16 deconvolution
FACE_MASK_181X = HERE / "cv181x" / "cls_attribute_gender_age_glass_mask_112_112_INT8_cv181x.cvimodel"
FACE_MASK_184X = HERE / "cv184x" / "cls_attribute_gender_age_glass_mask_112_112_INT8_cv184x.bmodel"
PEOPLE_448 = HERE / "people_448.npz"

ALL = sorted(p for p in HERE.rglob("*") if p.suffix in (".bmodel", ".cvimodel"))
